/*
 * fuzz_lock.c - libFuzzer target for envbuild.lock: the input is written
 * to a file and read with eb_lock_load; a lock that loads is queried as
 * the lock workflow does, indexed for resolve, and dumped canonically
 * (the canonical dump must load again and dump the same bytes).
 */
#include "fuzz.h"

#include "lock/lock.h"
#include "lock/resolve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *path = eb_fuzz_write("envbuild.lock", data, size);
	struct eb_error *err = NULL;
	json_t *lock = NULL;

	if (eb_lock_load(&lock, path, &err) == 0) {
		struct eb_resolve_lock *rl = NULL;
		char *dump = eb_lock_dump(lock), *dump2;
		json_t *again = NULL;

		EB_FUZZ_ASSERT(lock != NULL);
		(void)eb_lock_base_digest(lock, "training");
		(void)eb_lock_base_for(lock, "training", "python:3.11-slim");
		{
			const char *sha = NULL, *url = NULL, *fn = NULL;
			(void)eb_lock_package(lock, "training", "linux/amd64", "numpy", "1.26.4",
					      &sha, &url, &fn);
		}
		if (eb_resolve_lock_new(&rl, lock, "envbuild.lock", &err) == 0) {
			char *out = NULL;
			if (eb_resolve_ref(rl, "envbuild://training", 0, &out, &err) == 0)
				free(out);
			out = NULL;
			if (eb_resolve_ref(rl, "registry.example.com/ml/churn:inference", 1, &out,
					   &err) == 0)
				free(out);
		}
		eb_error_clear(&err);
		eb_resolve_lock_free(rl);

		EB_FUZZ_ASSERT(dump != NULL);
		free(path);
		path = eb_fuzz_write("envbuild.lock", dump, strlen(dump));
		EB_FUZZ_ASSERT(eb_lock_load(&again, path, &err) == 0);
		dump2 = eb_lock_dump(again);
		EB_FUZZ_ASSERT(dump2 && strcmp(dump, dump2) == 0);
		json_decref(again);
		free(dump);
		free(dump2);
	} else {
		EB_FUZZ_ASSERT(err != NULL);
	}
	json_decref(lock);
	eb_error_free(err);
	free(path);
	return 0;
}
