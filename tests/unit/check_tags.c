/* check_tags.c - placeholder */
#include "config.h"
#include "testutil.h"
START_TEST(placeholder) { ck_assert_int_eq(1, 1); }
END_TEST
static Suite *make_suite(void)
{
	Suite *s = suite_create("tags");
	TCase *tc = tcase_create("placeholder");
	tcase_add_test(tc, placeholder);
	suite_add_tcase(s, tc);
	return s;
}
EB_TEST_MAIN(make_suite)
