/*
 * sys.c - sleeping, environment settings and $PATH look-ups (sys.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/sys.h"

void eb_sleep_ms(long ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

long eb_env_long(const char *name, long def)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v <= 0)
		return def;
	return v;
}

char *eb_sys_find_program(const char *name)
{
	const char *path = getenv("PATH");
	const char *p;

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;;) {
		size_t len = strcspn(p, ":");
		char *cand = len ? eb_xasprintf("%.*s/%s", (int)len, p, name)
				 : eb_xasprintf("./%s", name);
		struct stat st;
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
			return cand;
		free(cand);
		if (!p[len])
			return NULL;
		p += len + 1;
	}
}
