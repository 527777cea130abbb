# The shared pipeline stages: elementwise planning, descriptor range checks,
# the cache key and the memory cache's key check.
uk_test(test_ew_plan LABELS cpu SOURCES test_ew_plan.c)
uk_test(test_call_checks LABELS cpu SOURCES test_call_checks.c)
uk_test(test_key_check LABELS nvrtc SOURCES test_key_check.c)
# The public API's one shape: uk_launch's members per kind, specs, destroy.
uk_test(test_api_shape LABELS cpu SOURCES test_api_shape.c)
