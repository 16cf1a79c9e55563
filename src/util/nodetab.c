/*
 * nodetab.c - the (parent, key or index) and node indexes that the YAML
 * and TOML readers hang their positions on (see nodetab.h).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/nodetab.h"

#define FNV_BASIS ((size_t)14695981039346656037ull)
#define FNV_PRIME ((size_t)1099511628211ull)

static size_t mix(size_t h, uintptr_t v)
{
	/* FNV-1a over the value's bytes, enough spread for pointers */
	for (size_t i = 0; i < sizeof(v); i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= FNV_PRIME;
	}
	return h;
}

static size_t slot_hash(const json_t *parent, const char *key, size_t index)
{
	size_t h = mix(FNV_BASIS, (uintptr_t)parent);

	if (!key)
		return mix(h, index);
	for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
		h ^= *p;
		h *= FNV_PRIME;
	}
	return h;
}

static int slot_match(const struct eb_nodetab_entry *e, const json_t *parent, const char *key,
		      size_t index)
{
	if (e->parent != parent)
		return 0;
	return key ? (e->key && strcmp(e->key, key) == 0) : (!e->key && e->index == index);
}

/* Index entry i unless an earlier entry holds its slot (or node): the
 * first one wins, so a duplicate key's finding points at the first. */
static void index_entry(struct eb_nodetab *t, size_t i)
{
	const struct eb_nodetab_entry *e = &t->e[i];
	size_t mask = t->nslots - 1, b;

	for (b = slot_hash(e->parent, e->key, e->index) & mask; t->byslot[b]; b = (b + 1) & mask)
		if (slot_match(&t->e[t->byslot[b] - 1], e->parent, e->key, e->index))
			goto node;
	t->byslot[b] = i + 1;
node:
	if (!e->by_node || !e->node)
		return;
	for (b = mix(FNV_BASIS, (uintptr_t)e->node) & mask; t->bynode[b]; b = (b + 1) & mask)
		if (t->e[t->bynode[b] - 1].node == e->node)
			return;
	t->bynode[b] = i + 1;
}

static void rehash(struct eb_nodetab *t)
{
	free(t->byslot);
	free(t->bynode);
	t->nslots = t->nslots ? t->nslots * 2 : 64;
	t->byslot = eb_xcalloc(t->nslots, sizeof(*t->byslot));
	t->bynode = eb_xcalloc(t->nslots, sizeof(*t->bynode));
	for (size_t i = 0; i < t->n; i++)
		if (t->e[i].committed)
			index_entry(t, i);
}

size_t eb_nodetab_add(struct eb_nodetab *t, const json_t *parent, const char *key, size_t index)
{
	struct eb_nodetab_entry *e;

	EB_ALLOC_GROW(t->e, t->n + 1, t->cap);
	e = &t->e[t->n];
	memset(e, 0, sizeof(*e));
	e->parent = parent;
	e->key = key ? eb_xstrdup(key) : NULL;
	e->index = index;
	return t->n++;
}

void eb_nodetab_commit(struct eb_nodetab *t, size_t id, const json_t *node, int by_node)
{
	struct eb_nodetab_entry *e = &t->e[id];

	e->node = node;
	e->by_node = !!by_node;
	e->committed = 1;
	/* the load factor counts every entry, committed or not: at most 1/2 */
	if (2 * t->n >= t->nslots)
		rehash(t); /* indexes this entry too */
	else
		index_entry(t, id);
}

size_t eb_nodetab_find(const struct eb_nodetab *t, const json_t *parent, const char *key,
		       size_t index)
{
	size_t mask = t->nslots - 1;

	if (!t->nslots)
		return 0;
	for (size_t b = slot_hash(parent, key, index) & mask; t->byslot[b]; b = (b + 1) & mask)
		if (slot_match(&t->e[t->byslot[b] - 1], parent, key, index))
			return t->byslot[b];
	return 0;
}

size_t eb_nodetab_find_node(const struct eb_nodetab *t, const json_t *node)
{
	size_t mask = t->nslots - 1;

	if (!t->nslots || !node)
		return 0;
	for (size_t b = mix(FNV_BASIS, (uintptr_t)node) & mask; t->bynode[b]; b = (b + 1) & mask)
		if (t->e[t->bynode[b] - 1].node == node)
			return t->bynode[b];
	return 0;
}

void eb_nodetab_release(struct eb_nodetab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->e[i].key);
	free(t->e);
	free(t->byslot);
	free(t->bynode);
	memset(t, 0, sizeof(*t));
}
