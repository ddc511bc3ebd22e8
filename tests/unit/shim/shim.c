// SPDX-License-Identifier: GPL-2.0
/*
 * Userspace shim: out-of-line parts (allocation with failure injection,
 * WARN counter, unbalanced-BST rbtree).
 */
#include <stdlib.h>
#include <string.h>

#include <linux/kernel.h>
#include <linux/rbtree.h>
#include <linux/slab.h>

unsigned long shim_warn_count;
u64 shim_jiffies64;
unsigned long shim_unlocks;
long shim_alloc_live;

static unsigned long shim_fail_countdown;
static bool shim_failed;

void shim_fail_alloc_in(unsigned long n)
{
	shim_fail_countdown = n;
	shim_failed = false;
}

bool shim_alloc_failed(void)
{
	return shim_failed;
}

void *shim_alloc(size_t size, gfp_t gfp)
{
	void *p;

	if (shim_fail_countdown && --shim_fail_countdown == 0) {
		shim_failed = true;
		return NULL;
	}
	if (size == SIZE_MAX)	/* saturated size computation */
		return NULL;
	p = (gfp & __GFP_ZERO) ? calloc(1, size ? size : 1) : malloc(size ? size : 1);
	if (p)	/* atomic: some tests allocate from several threads */
		__atomic_fetch_add(&shim_alloc_live, 1, __ATOMIC_RELAXED);
	return p;
}

void shim_free(const void *p)
{
	if (!p)
		return;
	__atomic_fetch_sub(&shim_alloc_live, 1, __ATOMIC_RELAXED);
	free((void *)p);
}

/* ---- rbtree: unbalanced BST with parent pointers ---- */

void rb_insert_color(struct rb_node *node, struct rb_root *root)
{
	/* rb_link_node() already linked it; no rebalancing here. */
	(void)node;
	(void)root;
}

/* Put @new where the subtree rooted at @old hangs (new may be NULL). */
static void shim_rb_transplant(struct rb_root *root, struct rb_node *old,
			       struct rb_node *new)
{
	struct rb_node *parent = old->shim_parent;

	if (!parent)
		root->rb_node = new;
	else if (parent->rb_left == old)
		parent->rb_left = new;
	else
		parent->rb_right = new;
	if (new)
		new->shim_parent = parent;
}

static struct rb_node *shim_rb_leftmost(struct rb_node *n)
{
	while (n->rb_left)
		n = n->rb_left;
	return n;
}

static struct rb_node *shim_rb_rightmost(struct rb_node *n)
{
	while (n->rb_right)
		n = n->rb_right;
	return n;
}

void rb_erase(struct rb_node *node, struct rb_root *root)
{
	struct rb_node *succ;

	if (!node->rb_left) {
		shim_rb_transplant(root, node, node->rb_right);
	} else if (!node->rb_right) {
		shim_rb_transplant(root, node, node->rb_left);
	} else {
		succ = shim_rb_leftmost(node->rb_right);
		if (succ->shim_parent != node) {
			shim_rb_transplant(root, succ, succ->rb_right);
			succ->rb_right = node->rb_right;
			succ->rb_right->shim_parent = succ;
		}
		shim_rb_transplant(root, node, succ);
		succ->rb_left = node->rb_left;
		succ->rb_left->shim_parent = succ;
	}
	node->shim_parent = NULL;
	node->rb_left = NULL;
	node->rb_right = NULL;
}

void rb_replace_node(struct rb_node *victim, struct rb_node *new,
		     struct rb_root *root)
{
	*new = *victim;
	if (victim->rb_left)
		victim->rb_left->shim_parent = new;
	if (victim->rb_right)
		victim->rb_right->shim_parent = new;
	shim_rb_transplant(root, victim, new);
}

struct rb_node *rb_first(const struct rb_root *root)
{
	return root->rb_node ? shim_rb_leftmost(root->rb_node) : NULL;
}

struct rb_node *rb_last(const struct rb_root *root)
{
	return root->rb_node ? shim_rb_rightmost(root->rb_node) : NULL;
}

struct rb_node *rb_next(const struct rb_node *node)
{
	const struct rb_node *parent;

	if (node->rb_right)
		return shim_rb_leftmost(node->rb_right);
	/* Climb while we come from a right child. */
	while ((parent = node->shim_parent) && node == parent->rb_right)
		node = parent;
	return (struct rb_node *)parent;
}

struct rb_node *rb_prev(const struct rb_node *node)
{
	const struct rb_node *parent;

	if (node->rb_left)
		return shim_rb_rightmost(node->rb_left);
	while ((parent = node->shim_parent) && node == parent->rb_left)
		node = parent;
	return (struct rb_node *)parent;
}

/* Deepest node reached by going left when possible, else right. */
static struct rb_node *shim_rb_deepest(const struct rb_node *n)
{
	for (;;) {
		if (n->rb_left)
			n = n->rb_left;
		else if (n->rb_right)
			n = n->rb_right;
		else
			return (struct rb_node *)n;
	}
}

struct rb_node *rb_first_postorder(const struct rb_root *root)
{
	return root->rb_node ? shim_rb_deepest(root->rb_node) : NULL;
}

struct rb_node *rb_next_postorder(const struct rb_node *node)
{
	const struct rb_node *parent;

	if (!node)
		return NULL;
	parent = node->shim_parent;
	/* After a left subtree comes the parent's right subtree, if any. */
	if (parent && node == parent->rb_left && parent->rb_right)
		return shim_rb_deepest(parent->rb_right);
	return (struct rb_node *)parent;
}

long shim_rb_check(const struct rb_root *root)
{
	const struct rb_node *n;
	long count = 0;

	if (root->rb_node && root->rb_node->shim_parent)
		return -1;
	for (n = rb_first(root); n; n = rb_next(n)) {
		if (n->rb_left && n->rb_left->shim_parent != n)
			return -1;
		if (n->rb_right && n->rb_right->shim_parent != n)
			return -1;
		count++;
	}
	return count;
}

/* ---- workqueues: queue_rcu_work() only (see linux/workqueue.h) ---- */

#include <linux/workqueue.h>

unsigned long shim_rcu_work_queued;
static bool shim_rcu_work_held;
static struct work_struct *shim_rcu_work_head, **shim_rcu_work_tail = &shim_rcu_work_head;

struct workqueue_struct *shim_alloc_workqueue(const char *name)
{
	(void)name;
	return calloc(1, sizeof(struct workqueue_struct));
}

unsigned long shim_rcu_work_run(void)
{
	struct work_struct *w;
	unsigned long n = 0;

	while ((w = shim_rcu_work_head)) {
		shim_rcu_work_head = w->shim_next;
		if (!shim_rcu_work_head)
			shim_rcu_work_tail = &shim_rcu_work_head;
		w->func(w);
		n++;
	}
	return n;
}

void shim_rcu_work_hold(bool hold)
{
	shim_rcu_work_held = hold;
	if (!hold)
		shim_rcu_work_run();
}

bool shim_queue_rcu_work(struct workqueue_struct *wq, struct rcu_work *rwork)
{
	(void)wq;
	shim_rcu_work_queued++;
	rwork->work.shim_next = NULL;
	*shim_rcu_work_tail = &rwork->work;
	shim_rcu_work_tail = &rwork->work.shim_next;
	if (!shim_rcu_work_held)
		shim_rcu_work_run();
	return true;
}

/* Like the kernel's: runs what is queued, then goes away. */
void shim_destroy_workqueue(struct workqueue_struct *wq)
{
	shim_rcu_work_run();
	free(wq);
}
