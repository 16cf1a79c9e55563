/*
 * nodetab.h - a side table over a jansson tree: find an entry by where a
 * value sits (parent container plus key or array index) or by the value
 * node itself.
 *
 * jansson keeps no positions and shares its true/false/null singletons,
 * so the readers that need "file:line:col" for every value (YAML in
 * yamljson.c, TOML in toml.c) record one entry per value here and keep
 * their own payload (line, column, flags) in an array indexed by the
 * entry's id.  Lookups are open-addressing hashes: a spec from a pull
 * request may hold a 300k-key mapping and a validator asks for the
 * position of every key, so a linear scan would be quadratic.
 *
 * An entry is added when its slot is known and committed when its value
 * is; only committed entries are found.  When two committed entries share
 * a slot (a duplicate key) or a node, the first one is found.
 *
 * Ownership: the table copies keys and borrows nodes (the caller keeps
 * the tree alive at least as long as the table); eb_nodetab_release()
 * frees what the table holds, not the struct itself.
 *
 * Layering (ground floor): util/ uses libc and the libraries it wraps
 * only; it knows nothing of specs, images, packages or the network.
 */
#ifndef EB_UTIL_NODETAB_H
#define EB_UTIL_NODETAB_H

#include <jansson.h>
#include <stddef.h>

struct eb_nodetab_entry {
	const json_t *parent;
	char *key;          /* NULL for array elements and the root */
	size_t index;
	const json_t *node; /* NULL until committed */
	unsigned committed : 1;
	unsigned by_node : 1; /* findable by node */
};

struct eb_nodetab {
	struct eb_nodetab_entry *e;
	size_t n, cap;
	size_t *byslot; /* (parent, key or index) -> id + 1, 0 empty */
	size_t *bynode; /* node -> id + 1 */
	size_t nslots;  /* a power of two, or 0 before the first commit */
};

#define EB_NODETAB_INIT { 0 }

/* A new entry for parent[key] (key NULL: parent[index]); returns its id,
 * which stays valid while the table lives (ids count up from 0). */
size_t eb_nodetab_add(struct eb_nodetab *t, const json_t *parent, const char *key, size_t index);
/* The entry's value is known: make it findable by slot and, when
 * `by_node`, by node. */
void eb_nodetab_commit(struct eb_nodetab *t, size_t id, const json_t *node, int by_node);
/* Id + 1 of the first committed entry for the slot or node; 0 when none. */
size_t eb_nodetab_find(const struct eb_nodetab *t, const json_t *parent, const char *key,
		       size_t index);
size_t eb_nodetab_find_node(const struct eb_nodetab *t, const json_t *node);
void eb_nodetab_release(struct eb_nodetab *t);

#endif
