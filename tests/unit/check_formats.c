#include "testutil.h"
static Suite *make_suite(void){return suite_create("formats");}
EB_TEST_MAIN(make_suite)
