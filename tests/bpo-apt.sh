# shellcheck shell=sh
# The private apt state of the backports suite the newest Debian kernel comes
# from (sourced by tests/deps.sh and tests/debug/build-kernel.sh; $top is the
# repository). Its own sources list, lists and cache under
# build/apt-SUITE-backports: the host's apt sources stay as they are.
#   bpo_setup    writes the sources list and runs apt-get update there
#   bpo_cache    apt-cache with that state
#   bpo_get      apt-get with that state (as root: downloads into root-owned dirs)
bpo_suite=trixie
bpo=${top:?}/build/apt-$bpo_suite-backports
bpo_cache() {
	apt-cache -o Dir::Etc::SourceList="$bpo/sources.list" -o Dir::Etc::SourceParts="$bpo/empty" \
		-o Dir::Etc::PreferencesParts="$bpo/empty" -o Dir::State::Lists="$bpo/lists" \
		-o Dir::State::status="$bpo/status" -o Dir::Cache="$bpo/cache" "$@"
}
bpo_get() {
	apt-get -o Dir::Etc::SourceList="$bpo/sources.list" -o Dir::Etc::SourceParts="$bpo/empty" \
		-o Dir::Etc::PreferencesParts="$bpo/empty" -o Dir::State::Lists="$bpo/lists" \
		-o Dir::State::status="$bpo/status" -o Dir::Cache="$bpo/cache" \
		-o APT::Sandbox::User=root "$@"
}
bpo_setup() {
	mkdir -p "$bpo/lists/partial" "$bpo/cache/archives/partial" "$bpo/empty"
	: >"$bpo/status"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $bpo_suite-backports main" \
		>"$bpo/sources.list"
	bpo_get update -q
}
