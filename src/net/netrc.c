/*
 * netrc.c - the netrc file as curl reads it: machine/default entries,
 * quoted tokens, comments and macdef blocks skipped.  Secrets read are
 * wiped from memory when no longer needed.
 */
#include "config.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/netrc.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static void wipe_free(char *s)
{
	if (s) {
		OPENSSL_cleanse(s, strlen(s));
		free(s);
	}
}

/* Next token: whitespace separated, "quoted with \\ escapes" allowed (as
 * curl reads them), '#' at a token start comments out the rest of the
 * line.  NULL at the end. */
static char *netrc_token(const char **pp, const char *end)
{
	const char *p = *pp;
	struct eb_buf b;

	for (;;) {
		while (p < end && is_space(*p))
			p++;
		if (p < end && *p == '#') {
			while (p < end && *p != '\n')
				p++;
			continue;
		}
		break;
	}
	if (p >= end) {
		*pp = p;
		return NULL;
	}
	eb_buf_init(&b, 0);
	if (*p == '"') {
		for (p++; p < end && *p != '"'; p++) {
			if (*p == '\\' && p + 1 < end)
				p++;
			if (eb_buf_addc(&b, *p) < 0)
				abort();
		}
		if (p < end)
			p++;
	} else {
		const char *s = p;
		while (p < end && !is_space(*p))
			p++;
		if (eb_buf_add(&b, s, (size_t)(p - s)) < 0)
			abort();
	}
	*pp = p;
	return eb_buf_detach(&b, NULL);
}

int eb_netrc_lookup(const char *path, const char *host, char **login, char **password,
		    struct eb_error **err)
{
	return eb_netrc_lookup_in(path, host, 1, login, password, err);
}

int eb_netrc_lookup_in(const char *path, const char *host, int use_default, char **login,
		       char **password, struct eb_error **err)
{
	enum { NONE, MATCH, DEFAULT, OTHER } cur = NONE;
	char *m_login = NULL, *m_pass = NULL, *d_login = NULL, *d_pass = NULL;
	int have_match = 0, have_default = 0, rc;
	struct eb_buf b;
	struct eb_error *e = NULL;
	const char *p, *end;
	char *tok;

	*login = *password = NULL;
	if (!path || !host)
		return 1;
	eb_buf_init(&b, 0);
	rc = eb_fs_read_file(&b, path, 1 << 20, &e);
	if (rc == -EB_ENOTFOUND) {
		eb_error_free(e);
		eb_buf_release(&b);
		return 1;
	}
	if (rc < 0) {
		/* eb_fs_read_file names the file only; the text is never
		 * quoted. */
		if (err && !*err)
			*err = e;
		else
			eb_error_free(e);
		eb_buf_release(&b);
		return rc;
	}
	p = b.ptr;
	end = b.ptr + b.len;
	while ((tok = netrc_token(&p, end))) {
		char **lp = NULL, **pp = NULL;

		if (strcmp(tok, "machine") == 0) {
			char *name = netrc_token(&p, end);
			if (cur == MATCH || !name) {
				free(name);
				wipe_free(tok);
				break; /* the first entry for the host wins */
			}
			cur = strcasecmp(name, host) == 0 && !have_match ? MATCH : OTHER;
			have_match |= cur == MATCH;
			free(name);
		} else if (strcmp(tok, "default") == 0) {
			if (cur == MATCH) {
				wipe_free(tok);
				break;
			}
			cur = have_default ? OTHER : DEFAULT;
			have_default = 1;
		} else if (strcmp(tok, "login") == 0 || strcmp(tok, "password") == 0 ||
			   strcmp(tok, "account") == 0) {
			char *val = netrc_token(&p, end);
			int is_login = tok[0] == 'l', is_pass = tok[0] == 'p';
			if (cur == MATCH) {
				lp = &m_login;
				pp = &m_pass;
			} else if (cur == DEFAULT) {
				lp = &d_login;
				pp = &d_pass;
			}
			if (lp && is_login && !*lp)
				*lp = eb_steal_ptr(&val);
			else if (pp && is_pass && !*pp)
				*pp = eb_steal_ptr(&val);
			wipe_free(val);
		} else if (strcmp(tok, "macdef") == 0) {
			/* a macro runs to the next empty line */
			const char *blank = memmem(p, (size_t)(end - p), "\n\n", 2);
			p = blank ? blank + 2 : end;
		}
		wipe_free(tok);
	}
	OPENSSL_cleanse(b.ptr, b.len);
	eb_buf_release(&b);

	if (m_login || m_pass) {
		*login = m_login ? m_login : eb_xstrdup("");
		*password = m_pass ? m_pass : eb_xstrdup("");
		wipe_free(d_login);
		wipe_free(d_pass);
		return 0;
	}
	if ((d_login || d_pass) && use_default) {
		*login = d_login ? d_login : eb_xstrdup("");
		*password = d_pass ? d_pass : eb_xstrdup("");
		return 0;
	}
	wipe_free(d_login);
	wipe_free(d_pass);
	return 1;
}
