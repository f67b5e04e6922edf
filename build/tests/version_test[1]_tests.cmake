add_test([=[Version.HeaderMacrosStringAndLibraryAgree]=]  /work/main/build/tests/version_test [==[--gtest_filter=Version.HeaderMacrosStringAndLibraryAgree]==] --gtest_also_run_disabled_tests)
set_tests_properties([=[Version.HeaderMacrosStringAndLibraryAgree]=]  PROPERTIES WORKING_DIRECTORY /work/main/build/tests SKIP_REGULAR_EXPRESSION [==[\[  SKIPPED \]]==] LABELS unit ENVIRONMENT [==[CCNUMA_TOPOLOGY=]==] [==[CCNUMA_BIND=]==] [==[CCNUMA_CPUSET=]==])
set(  version_test_TESTS Version.HeaderMacrosStringAndLibraryAgree)
