/* Helpers shared by the tests (filled in as the tests move onto it). */
#ifndef MMP_TESTS_UTIL_H
#define MMP_TESTS_UTIL_H
#endif
