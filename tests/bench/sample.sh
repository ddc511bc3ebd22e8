#!/bin/bash
# Counter sampler for tests/bench/lib.sh (nfb_measure); runs inside nfb-rx on
# the vCPU that is not measured.
# usage: sample.sh trafgen|pktgen WARMUP SECS FIFO
# Waits until packets flow (at most 60 s), lets WARMUP seconds pass, then takes
# two (time, counter) pairs SECS apart. Prints "T0 P0 L0 T1 P1 L1": time (s),
# packets handled (rx0 rx_packets for trafgen, pktgen's pkts-sofar), packets
# seen by L4 (Tcp InSegs; Udp InDatagrams+NoPorts+InErrors); or "nostart".
# Uses shell builtins only between the first and last reading: under TCG a fork
# on the idle vCPU steals time from the measured one. FIFO is a named pipe
# nobody writes to; "read -t" on it is a sleep without a fork.
mode=$1 warm=$2 secs=$3 fifo=$4
exec 9<>"$fifo"
nap() { read -rt "$1" -u 9 _; }
snmp() { # sum of the named fields of one /proc/net/snmp row
	local want=$1 n=0 hdr vals k f
	shift
	while read -ra hdr && read -ra vals; do
		[ "${hdr[0]}" = "$want:" ] || continue
		for f; do
			for k in "${!hdr[@]}"; do
				[ "${hdr[$k]}" = "$f" ] && n=$((n + vals[k]))
			done
		done
	done </proc/net/snmp
	L=$n
}
sample() {
	local l a
	T=$EPOCHREALTIME P=0
	if [ "$mode" = trafgen ]; then
		while read -r l; do
			case $l in rx0:*) read -ra a <<<"${l#rx0:}"; P=${a[1]} ;; esac
		done </proc/net/dev
		snmp Tcp InSegs
	else
		while read -r l; do
			case $l in *pkts-sofar:*) read -ra a <<<"${l#*pkts-sofar:}"; P=${a[0]} ;; esac
		done </proc/net/pktgen/rx0
		snmp Udp InDatagrams NoPorts InErrors
	fi
}
sample
p=$P i=0
while [ "$P" = "$p" ]; do
	i=$((i + 1))
	[ $i -le 600 ] || { echo nostart; exit 0; }
	nap 0.1
	sample
done
nap "$warm"
sample
t0=$T p0=$P l0=$L
nap "$secs"
sample
echo "$t0 $p0 $l0 $T $P $L"
