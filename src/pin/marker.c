/*
 * marker.c - PEP 508 environment markers: a recursive-descent parser that
 * builds a tree ("and" binds tighter than "or"), evaluation against a given
 * target environment, and a canonical printer.
 *
 * Evaluation follows pypa/packaging 26.x: the version-valued variables
 * compare as PEP 440 versions when both sides parse (else as strings), and
 * on strings "<" and ">" are false while "<=" and ">=" mean equality.
 * `extra` values are normalised as PEP 685 asks.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pin/marker.h"
#include "pin/version.h"
#include "util/alloc.h"
#include "util/buf.h"

/* Deep enough for any real marker, shallow enough that recursion on hostile
 * input cannot exhaust the stack. */
#define MAX_DEPTH 64

enum var_kind { VK_STRING, VK_VERSION, VK_EXTRA };

static const struct var_def {
	const char *name;
	unsigned bit;
	enum var_kind kind;
	size_t off; /* into struct eb_marker_env */
} vars[] = {
	{ "python_version", EB_MARKER_VAR_PYTHON_VERSION, VK_VERSION,
	  offsetof(struct eb_marker_env, python_version) },
	{ "python_full_version", EB_MARKER_VAR_PYTHON_FULL_VERSION, VK_VERSION,
	  offsetof(struct eb_marker_env, python_full_version) },
	{ "implementation_name", EB_MARKER_VAR_IMPLEMENTATION_NAME, VK_STRING,
	  offsetof(struct eb_marker_env, implementation_name) },
	{ "implementation_version", EB_MARKER_VAR_IMPLEMENTATION_VERSION, VK_VERSION,
	  offsetof(struct eb_marker_env, implementation_version) },
	{ "platform_python_implementation", EB_MARKER_VAR_PLATFORM_PYTHON_IMPLEMENTATION,
	  VK_STRING, offsetof(struct eb_marker_env, platform_python_implementation) },
	{ "os_name", EB_MARKER_VAR_OS_NAME, VK_STRING, offsetof(struct eb_marker_env, os_name) },
	{ "sys_platform", EB_MARKER_VAR_SYS_PLATFORM, VK_STRING,
	  offsetof(struct eb_marker_env, sys_platform) },
	{ "platform_system", EB_MARKER_VAR_PLATFORM_SYSTEM, VK_STRING,
	  offsetof(struct eb_marker_env, platform_system) },
	{ "platform_machine", EB_MARKER_VAR_PLATFORM_MACHINE, VK_STRING,
	  offsetof(struct eb_marker_env, platform_machine) },
	{ "platform_release", EB_MARKER_VAR_PLATFORM_RELEASE, VK_VERSION,
	  offsetof(struct eb_marker_env, platform_release) },
	{ "platform_version", EB_MARKER_VAR_PLATFORM_VERSION, VK_STRING,
	  offsetof(struct eb_marker_env, platform_version) },
	{ "extra", EB_MARKER_VAR_EXTRA, VK_EXTRA, offsetof(struct eb_marker_env, extra) },
};

#define NVARS (sizeof(vars) / sizeof(vars[0]))

/* Spellings from setuptools' time that pip still accepts. */
static const struct {
	const char *alias;
	const char *name;
} var_aliases[] = {
	{ "os.name", "os_name" },
	{ "sys.platform", "sys_platform" },
	{ "platform.version", "platform_version" },
	{ "platform.machine", "platform_machine" },
	{ "platform.python_implementation", "platform_python_implementation" },
	{ "python_implementation", "platform_python_implementation" },
};

enum mop { OP_LT, OP_LE, OP_EQ, OP_NE, OP_GE, OP_GT, OP_COMPAT, OP_ARBITRARY, OP_IN, OP_NOT_IN };

static const char *const mop_str[] = { "<", "<=", "==", "!=", ">=", ">", "~=", "===", "in",
				       "not in" };

enum node_kind { NODE_CMP, NODE_AND, NODE_OR };

struct operand {
	int var;   /* index into vars[], or -1 for a literal */
	char *str; /* the literal (owned), NULL for a variable */
};

struct eb_marker {
	enum node_kind kind;
	struct eb_marker *l, *r; /* NODE_AND, NODE_OR */
	struct operand lhs, rhs; /* NODE_CMP */
	enum mop op;
	unsigned col; /* of the comparison's first operand */
};

struct mparse {
	const char *s;
	size_t i, len;
	int depth;
	struct eb_error **err;
};

static int fail(struct mparse *p, size_t at, const char *hint, const char *fmt, ...)
	EB_PRINTF(4, 5);

static int fail(struct mparse *p, size_t at, const char *hint, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = eb_error_vset_col(p->err, EB_EINVALID, (unsigned)at + 1, hint, fmt, ap);
	va_end(ap);
	return r;
}

/* A short printable description of what is at `at`, for "got ..." in
 * messages: the next word, or "end of marker". */
static const char *describe_at(const struct mparse *p, size_t at, char *buf, size_t size)
{
	size_t n = 0;

	if (at >= p->len)
		return "end of marker";
	if ((unsigned char)p->s[at] < 0x20 || p->s[at] == 0x7f)
		return "a control character";
	while (at + n < p->len && n + 3 < size && p->s[at + n] != ' ' && p->s[at + n] != '\t' &&
	       (unsigned char)p->s[at + n] >= 0x20 && p->s[at + n] != 0x7f)
		n++;
	buf[0] = '\'';
	memcpy(buf + 1, p->s + at, n);
	buf[n + 1] = '\'';
	buf[n + 2] = '\0';
	return buf;
}

static int is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static void skip_ws(struct mparse *p)
{
	while (p->i < p->len && (p->s[p->i] == ' ' || p->s[p->i] == '\t'))
		p->i++;
}

/* The keyword kw as a whole word at the cursor (not "order" for "or"). */
static int at_keyword(const struct mparse *p, const char *kw)
{
	size_t n = strlen(kw);

	return p->len - p->i >= n && memcmp(p->s + p->i, kw, n) == 0 &&
	       (p->i + n == p->len || !is_word(p->s[p->i + n]));
}

static void node_free(struct eb_marker *m)
{
	if (!m)
		return;
	node_free(m->l);
	node_free(m->r);
	free(m->lhs.str);
	free(m->rhs.str);
	free(m);
}

/* PEP 503 normalisation, which PEP 685 applies to extras: runs of "-_."
 * become one "-", letters go lower-case. */
static char *normalize_name(const char *s)
{
	struct eb_buf b;

	eb_buf_init(&b, 0);
	while (*s) {
		if (*s == '-' || *s == '_' || *s == '.') {
			while (*s == '-' || *s == '_' || *s == '.')
				s++;
			(void)eb_buf_addc(&b, '-');
			continue;
		}
		(void)eb_buf_addc(&b, (*s >= 'A' && *s <= 'Z') ? (char)(*s - 'A' + 'a') : *s);
		s++;
	}
	return eb_buf_detach(&b, NULL);
}

/* after_op: the operand follows an operator, where an unquoted value is the
 * likely mistake. */
static int parse_operand(struct mparse *p, struct operand *out, int after_op)
{
	char got[32];
	const char *s = p->s, *name;
	size_t start = p->i, k, n;

	out->var = -1;
	out->str = NULL;
	if (p->i >= p->len)
		return fail(p, p->i, NULL, "expected a marker variable or quoted string, got %s",
			    describe_at(p, p->i, got, sizeof(got)));
	if (s[p->i] == '"' || s[p->i] == '\'') {
		char q = s[p->i];
		size_t b = ++p->i;

		while (p->i < p->len && s[p->i] != q) {
			if (s[p->i] == '\\')
				return fail(p, p->i, "PEP 508 strings cannot contain backslashes",
					    "backslash in marker string");
			if ((unsigned char)s[p->i] < 0x20 && s[p->i] != '\t')
				return fail(p, p->i, NULL, "control character in marker string");
			p->i++;
		}
		if (p->i >= p->len)
			return fail(p, start, NULL, "unterminated string in marker");
		out->str = eb_xstrndup(s + b, p->i - b);
		p->i++;
		return 0;
	}
	while (p->i < p->len && (is_word(s[p->i]) || s[p->i] == '.'))
		p->i++;
	if (p->i == start)
		return fail(p, start, NULL, "expected a marker variable or quoted string, got %s",
			    describe_at(p, start, got, sizeof(got)));
	name = s + start;
	n = p->i - start;
	for (k = 0; k < sizeof(var_aliases) / sizeof(var_aliases[0]); k++) {
		if (strlen(var_aliases[k].alias) == n &&
		    memcmp(var_aliases[k].alias, name, n) == 0) {
			name = var_aliases[k].name;
			n = strlen(name);
			break;
		}
	}
	for (k = 0; k < NVARS; k++) {
		if (strlen(vars[k].name) == n && memcmp(vars[k].name, name, n) == 0) {
			out->var = (int)k;
			return 0;
		}
	}
	if ((p->i - start == 6 && memcmp(s + start, "extras", 6) == 0) ||
	    (p->i - start == 17 && memcmp(s + start, "dependency_groups", 17) == 0))
		return fail(p, start, NULL, "marker variable '%.*s' is only valid in lock files",
			    (int)(p->i - start), s + start);
	if (after_op || (s[start] >= '0' && s[start] <= '9')) {
		char *hint = eb_xasprintf("quote string values, as in '\"%.*s\"'",
					  (int)(p->i - start), s + start);
		int r = fail(p, start, hint, "expected a marker variable or quoted string, got %s",
			     describe_at(p, start, got, sizeof(got)));
		free(hint);
		return r;
	}
	return fail(p, start,
		    "variables are python_version, python_full_version, sys_platform, "
		    "platform_machine, platform_system, os_name, implementation_name, "
		    "implementation_version, platform_python_implementation, "
		    "platform_release, platform_version and extra",
		    "unknown marker variable '%.*s'", (int)(p->i - start), s + start);
}

static int parse_op(struct mparse *p, enum mop *op)
{
	static const struct {
		const char *text;
		enum mop op;
	} ops[] = {
		{ "===", OP_ARBITRARY }, { "==", OP_EQ }, { "!=", OP_NE }, { "~=", OP_COMPAT },
		{ "<=", OP_LE },         { ">=", OP_GE }, { "<", OP_LT },  { ">", OP_GT },
	};
	size_t k;

	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		size_t n = strlen(ops[k].text);
		if (p->len - p->i >= n && memcmp(p->s + p->i, ops[k].text, n) == 0) {
			*op = ops[k].op;
			p->i += n;
			return 0;
		}
	}
	if (at_keyword(p, "in")) {
		*op = OP_IN;
		p->i += 2;
		return 0;
	}
	if (at_keyword(p, "not")) {
		size_t at = p->i;
		p->i += 3;
		if (p->i < p->len && (p->s[p->i] == ' ' || p->s[p->i] == '\t')) {
			skip_ws(p);
			if (at_keyword(p, "in")) {
				*op = OP_NOT_IN;
				p->i += 2;
				return 0;
			}
		}
		return fail(p, at, NULL, "expected 'in' after 'not'");
	}
	{
		char got[32];
		return fail(p, p->i, "operators are <, <=, ==, !=, >=, >, ~=, ===, in and not in",
			    "expected a marker operator, got %s",
			    describe_at(p, p->i, got, sizeof(got)));
	}
}

static int parse_or(struct mparse *p, struct eb_marker **out);

static int parse_comparison(struct mparse *p, struct eb_marker **out)
{
	struct eb_marker *m = eb_xcalloc(1, sizeof(*m));
	size_t opat;
	int r, key;

	m->kind = NODE_CMP;
	m->col = (unsigned)p->i + 1;
	if ((r = parse_operand(p, &m->lhs, 0)) < 0)
		goto fail;
	skip_ws(p);
	opat = p->i;
	if ((r = parse_op(p, &m->op)) < 0)
		goto fail;
	skip_ws(p);
	if ((r = parse_operand(p, &m->rhs, 1)) < 0)
		goto fail;

	key = m->lhs.var >= 0 ? m->lhs.var : m->rhs.var;
	if (key >= 0 && vars[key].kind != VK_VERSION &&
	    (m->op == OP_COMPAT || m->op == OP_ARBITRARY)) {
		r = fail(p, opat, "use '==' or '!=' to compare this variable",
			 "operator '%s' needs a version, but '%s' is a string", mop_str[m->op],
			 vars[key].name);
		goto fail;
	}
	/* PEP 685: compare extras by normalised name. */
	if (m->lhs.var >= 0 && vars[m->lhs.var].kind == VK_EXTRA && m->rhs.str) {
		char *n = normalize_name(m->rhs.str);
		free(m->rhs.str);
		m->rhs.str = n;
	} else if (m->rhs.var >= 0 && vars[m->rhs.var].kind == VK_EXTRA && m->lhs.str) {
		char *n = normalize_name(m->lhs.str);
		free(m->lhs.str);
		m->lhs.str = n;
	}
	*out = m;
	return 0;
fail:
	node_free(m);
	return r;
}

static int parse_atom(struct mparse *p, struct eb_marker **out)
{
	int r;

	skip_ws(p);
	if (p->i < p->len && p->s[p->i] == '(') {
		size_t open = p->i;

		if (++p->depth > MAX_DEPTH)
			return fail(p, open, NULL, "marker nested too deeply");
		p->i++;
		if ((r = parse_or(p, out)) < 0)
			return r;
		skip_ws(p);
		if (p->i >= p->len || p->s[p->i] != ')') {
			node_free(*out);
			*out = NULL;
			return fail(p, p->i, NULL, "expected ')' to close '(' at column %zu",
				    open + 1);
		}
		p->i++;
		p->depth--;
		skip_ws(p);
		return 0;
	}
	r = parse_comparison(p, out);
	skip_ws(p);
	return r;
}

static int parse_chain(struct mparse *p, struct eb_marker **out, int is_or)
{
	struct eb_marker *left = NULL, *right;
	const char *kw = is_or ? "or" : "and";
	int r;

	r = is_or ? parse_chain(p, &left, 0) : parse_atom(p, &left);
	if (r < 0)
		return r;
	while (at_keyword(p, kw)) {
		struct eb_marker *n;

		p->i += strlen(kw);
		r = is_or ? parse_chain(p, &right, 0) : parse_atom(p, &right);
		if (r < 0) {
			node_free(left);
			return r;
		}
		n = eb_xcalloc(1, sizeof(*n));
		n->kind = is_or ? NODE_OR : NODE_AND;
		n->l = left;
		n->r = right;
		left = n;
	}
	*out = left;
	return 0;
}

static int parse_or(struct mparse *p, struct eb_marker **out)
{
	return parse_chain(p, out, 1);
}

int eb_marker_parse(struct eb_marker **out, const char *s, size_t len, struct eb_error **err)
{
	struct mparse p = { s, 0, len, 0, err };
	struct eb_marker *m = NULL;
	int r;

	*out = NULL;
	skip_ws(&p);
	if (p.i == len)
		return fail(&p, p.i, NULL, "empty marker");
	if ((r = parse_or(&p, &m)) < 0)
		return r;
	if (p.i < len) {
		char c = s[p.i];
		if (c == '<' || c == '>' || c == '=' || c == '!' || c == '~')
			r = fail(&p, p.i,
				 "split it: 'python_version >= \"3.8\" and python_version < \"3.12\"'",
				 "chained comparisons are not allowed in markers");
		else if (c == ')')
			r = fail(&p, p.i, NULL, "unmatched ')' in marker");
		else {
			char got[32];
			r = fail(&p, p.i, NULL, "expected 'and', 'or' or end of marker, got %s",
				 describe_at(&p, p.i, got, sizeof(got)));
		}
		node_free(m);
		return r;
	}
	*out = m;
	return 0;
}

void eb_marker_free(struct eb_marker *m)
{
	node_free(m);
}

/* --- environment --------------------------------------------------------- */

/* python_version needs "3.11" and python_full_version "3.11.0" whatever the
 * caller passed, and env may only point at static storage or the argument:
 * hence this table of every CPython minor. */
#define PYV(mi) { "3." #mi, "3." #mi ".0" }
static const struct {
	const char *minor, *full0;
} py_versions[] = {
	{ "2.7", "2.7.0" }, PYV(0),  PYV(1),  PYV(2),  PYV(3),  PYV(4),  PYV(5),  PYV(6),
	PYV(7),  PYV(8),  PYV(9),  PYV(10), PYV(11), PYV(12), PYV(13), PYV(14), PYV(15),
	PYV(16), PYV(17), PYV(18), PYV(19), PYV(20), PYV(21), PYV(22), PYV(23), PYV(24),
	PYV(25), PYV(26), PYV(27), PYV(28), PYV(29), PYV(30), PYV(31), PYV(32), PYV(33),
	PYV(34), PYV(35), PYV(36), PYV(37), PYV(38), PYV(39),
};
#undef PYV

void eb_marker_env_init(struct eb_marker_env *env, const char *python_version,
			const char *machine)
{
	const char *pv = python_version ? python_version : "";
	size_t k, dots = 0, minor_len = 0;

	memset(env, 0, sizeof(*env));
	for (k = 0; pv[k]; k++) {
		if (pv[k] == '.' && ++dots == 2)
			break;
	}
	minor_len = k;
	env->python_version = pv;
	env->python_full_version = pv;
	for (k = 0; k < sizeof(py_versions) / sizeof(py_versions[0]); k++) {
		if (strlen(py_versions[k].minor) == minor_len &&
		    memcmp(py_versions[k].minor, pv, minor_len) == 0) {
			env->python_version = py_versions[k].minor;
			if (!pv[minor_len])
				env->python_full_version = py_versions[k].full0;
			break;
		}
	}
	env->implementation_name = "cpython";
	env->implementation_version = env->python_full_version;
	env->platform_python_implementation = "CPython";
	env->os_name = "posix";
	env->sys_platform = "linux";
	env->platform_system = "Linux";
	/* uname -m spelling, which is what platform.machine() reports; OCI
	 * platform names are accepted too */
	if (!machine)
		machine = "";
	if (strcmp(machine, "amd64") == 0)
		machine = "x86_64";
	else if (strcmp(machine, "arm64") == 0)
		machine = "aarch64";
	env->platform_machine = machine;
	env->platform_release = "";
	env->platform_version = "";
	env->extra = "";
}

/* --- evaluation ---------------------------------------------------------- */

static const char *env_value(const struct eb_marker_env *env, int var)
{
	const char *v = *(const char *const *)((const char *)env + vars[var].off);

	return v ? v : "";
}

static int ieq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = (*a >= 'A' && *a <= 'Z') ? (char)(*a - 'A' + 'a') : *a;
		char y = (*b >= 'A' && *b <= 'Z') ? (char)(*b - 'A' + 'a') : *b;
		if (x != y)
			return 0;
	}
	return *a == *b;
}

/* packaging's _eval_op for a version variable: the specifier op+rhs,
 * when it is one, contains lhs (false when lhs is no version: a reversed
 * 'dog' ~= implementation_version).  Returns 0/1, or -1 when op+rhs is no
 * specifier (then the caller compares strings). */
static int version_compare(const char *lhs, enum mop op, const char *rhs)
{
	struct eb_specifier_set set;
	struct eb_version v;
	char *spec;
	int r = -1;

	if (op == OP_ARBITRARY) {
		/* "===" takes any text without blanks, ';' or ')' */
		if (rhs[strcspn(rhs, " \t\r\n\f\v;)")])
			return -1;
		return ieq(lhs, rhs);
	}
	if (strchr(rhs, ','))
		return -1;
	spec = eb_xasprintf("%s%s", mop_str[op], rhs);
	if (eb_specifier_set_parse(&set, spec, strlen(spec), NULL) == 0) {
		if (set.n == 1) {
			r = 0;
			if (eb_version_parse(&v, lhs, strlen(lhs), NULL) == 0) {
				r = eb_specifier_set_contains(&set, &v, lhs);
				eb_version_release(&v);
			}
		}
		eb_specifier_set_release(&set);
	}
	free(spec);
	return r;
}

static int eval_cmp(const struct eb_marker *m, const struct eb_marker_env *env, int *result,
		    struct eb_error **err)
{
	char *lfree = NULL, *rfree = NULL;
	const char *lv, *rv;
	int key = m->lhs.var >= 0 ? m->lhs.var : m->rhs.var;
	int r = 0;

	lv = m->lhs.var >= 0 ? env_value(env, m->lhs.var) : m->lhs.str;
	rv = m->rhs.var >= 0 ? env_value(env, m->rhs.var) : m->rhs.str;
	if (m->lhs.var >= 0 && vars[m->lhs.var].kind == VK_EXTRA)
		lv = lfree = normalize_name(lv);
	if (m->rhs.var >= 0 && vars[m->rhs.var].kind == VK_EXTRA)
		rv = rfree = normalize_name(rv);

	switch (m->op) {
	case OP_IN:
		*result = strstr(rv, lv) != NULL;
		goto done;
	case OP_NOT_IN:
		*result = strstr(rv, lv) == NULL;
		goto done;
	default:
		break;
	}
	if (key >= 0 && vars[key].kind == VK_VERSION) {
		int c = version_compare(lv, m->op, rv);
		if (c >= 0) {
			*result = c;
			goto done;
		}
	}
	/* on strings (as packaging): == and !=, <= and >= as equality, < and
	 * > false; ~= and === have no meaning (UndefinedComparison) */
	switch (m->op) {
	case OP_EQ:
	case OP_LE:
	case OP_GE:
		*result = strcmp(lv, rv) == 0;
		break;
	case OP_NE:
		*result = strcmp(lv, rv) != 0;
		break;
	case OP_LT:
	case OP_GT:
		*result = 0;
		break;
	default:
		r = eb_error_set_at(err, EB_EINVALID, NULL, 0, m->col,
				    "cannot evaluate '%s' on '%s' and '%s': not versions",
				    mop_str[m->op], lv, rv);
		break;
	}
done:
	free(lfree);
	free(rfree);
	return r;
}

int eb_marker_eval(const struct eb_marker *m, const struct eb_marker_env *env, int *result,
		   struct eb_error **err)
{
	int a, b, r;

	if (m->kind == NODE_CMP)
		return eval_cmp(m, env, result, err);
	/* both sides, so an error anywhere is reported whatever the values */
	if ((r = eb_marker_eval(m->l, env, &a, err)) < 0)
		return r;
	if ((r = eb_marker_eval(m->r, env, &b, err)) < 0)
		return r;
	*result = m->kind == NODE_AND ? (a && b) : (a || b);
	return 0;
}

unsigned eb_marker_vars_used(const struct eb_marker *m)
{
	unsigned bits = 0;

	if (!m)
		return 0;
	if (m->kind != NODE_CMP)
		return eb_marker_vars_used(m->l) | eb_marker_vars_used(m->r);
	if (m->lhs.var >= 0)
		bits |= vars[m->lhs.var].bit;
	if (m->rhs.var >= 0)
		bits |= vars[m->rhs.var].bit;
	return bits;
}

/* --- printing ------------------------------------------------------------ */

static void print_operand(struct eb_buf *b, const struct operand *o)
{
	if (o->var >= 0)
		(void)eb_buf_adds(b, vars[o->var].name);
	else if (strchr(o->str, '"'))
		(void)eb_buf_addf(b, "'%s'", o->str);
	else
		(void)eb_buf_addf(b, "\"%s\"", o->str);
}

static void print_node(struct eb_buf *b, const struct eb_marker *m)
{
	if (m->kind == NODE_CMP) {
		print_operand(b, &m->lhs);
		(void)eb_buf_addf(b, " %s ", mop_str[m->op]);
		print_operand(b, &m->rhs);
		return;
	}
	/* only "or" under "and" needs parentheses */
	if (m->kind == NODE_AND && m->l->kind == NODE_OR) {
		(void)eb_buf_addc(b, '(');
		print_node(b, m->l);
		(void)eb_buf_addc(b, ')');
	} else {
		print_node(b, m->l);
	}
	(void)eb_buf_adds(b, m->kind == NODE_AND ? " and " : " or ");
	if (m->kind == NODE_AND && m->r->kind == NODE_OR) {
		(void)eb_buf_addc(b, '(');
		print_node(b, m->r);
		(void)eb_buf_addc(b, ')');
	} else {
		print_node(b, m->r);
	}
}

char *eb_marker_to_string(const struct eb_marker *m)
{
	struct eb_buf b;

	eb_buf_init(&b, 0);
	if (m)
		print_node(&b, m);
	return eb_buf_detach(&b, NULL);
}
