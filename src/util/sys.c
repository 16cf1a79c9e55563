/*
 * sys.c - sleeping and environment settings (sys.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

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
