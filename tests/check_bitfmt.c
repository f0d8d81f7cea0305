/* PLACEHOLDER: replaced by the numeric-core work. */
#include <check.h>
#include <stdlib.h>
#include "dtype.h"
START_TEST(t_placeholder) { ck_assert_uint_eq(bp_f32_to_bf16(1.0f), 0x3f80); }
END_TEST
int main(void) { Suite *s = suite_create("bitfmt"); TCase *tc = tcase_create("core"); tcase_add_test(tc, t_placeholder); suite_add_tcase(s, tc); SRunner *r = srunner_create(s); srunner_run_all(r, CK_NORMAL); int f = srunner_ntests_failed(r); srunner_free(r); return f ? EXIT_FAILURE : EXIT_SUCCESS; }
