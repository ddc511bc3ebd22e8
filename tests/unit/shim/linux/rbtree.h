/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: the rbtree API as an unbalanced binary search tree with
 * parent pointers (rb_insert_color() does no rebalancing). Callers link
 * and walk nodes exactly as with the kernel's rbtree. Implemented in
 * shim.c; shim_rb_check() verifies the parent links of a whole tree.
 */
#ifndef _SHIM_LINUX_RBTREE_H
#define _SHIM_LINUX_RBTREE_H

#include <linux/types.h>
#include <linux/kernel.h>

struct rb_node {
	struct rb_node	*shim_parent;
	struct rb_node	*rb_right;
	struct rb_node	*rb_left;
};

struct rb_root {
	struct rb_node	*rb_node;
};

#define RB_ROOT			((struct rb_root) { NULL, })
#define RB_EMPTY_ROOT(root)	(READ_ONCE((root)->rb_node) == NULL)
#define RB_EMPTY_NODE(node)	((node)->shim_parent == (node))
#define RB_CLEAR_NODE(node)	((node)->shim_parent = (node))
#define rb_parent(node)		((node)->shim_parent)

#define rb_entry(ptr, type, member)	container_of(ptr, type, member)
#define rb_entry_safe(ptr, type, member) ({				\
	__typeof__(ptr) ____ptr = (ptr);				\
	____ptr ? rb_entry(____ptr, type, member) : NULL;		\
})

static inline void rb_link_node(struct rb_node *node, struct rb_node *parent,
				struct rb_node **rb_link)
{
	node->shim_parent = parent;
	node->rb_left = NULL;
	node->rb_right = NULL;
	*rb_link = node;
}

void rb_insert_color(struct rb_node *node, struct rb_root *root);
void rb_erase(struct rb_node *node, struct rb_root *root);
struct rb_node *rb_first(const struct rb_root *root);
struct rb_node *rb_last(const struct rb_root *root);
struct rb_node *rb_next(const struct rb_node *node);
struct rb_node *rb_prev(const struct rb_node *node);
struct rb_node *rb_first_postorder(const struct rb_root *root);
struct rb_node *rb_next_postorder(const struct rb_node *node);
void rb_replace_node(struct rb_node *victim, struct rb_node *new,
		     struct rb_root *root);

/* Number of nodes, or -1 if a parent/child link is inconsistent. */
long shim_rb_check(const struct rb_root *root);

#define rbtree_postorder_for_each_entry_safe(pos, n, root, field)	\
	for (pos = rb_entry_safe(rb_first_postorder(root),		\
				 __typeof__(*pos), field);		\
	     pos && ({ n = rb_entry_safe(rb_next_postorder(&pos->field), \
					 __typeof__(*pos), field); 1; }); \
	     pos = n)

#endif
