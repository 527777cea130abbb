# The reduction planner offline (bench/tools/plan_regret.py): its plan and the forced plans
# for a table of shapes, no driver needed.
add_executable(plan_describe ${CMAKE_CURRENT_LIST_DIR}/plan_describe.c)
target_link_libraries(plan_describe PRIVATE ukern_internal)
# The planner against the committed H200 tables of today's kernels (session 26: tiles of 2-64
# threads an output forced at every point; with the short-column tiles 8.9 us over 82 column
# sums, 5.2 us over 24 argmax shapes, where session 25's planner loses 22.1 and 8.6; rows of
# argmax and sums under forced groups, row_plans.py: 1.3 us each, 4.0 for argmax before the
# wide-partial rules; the row argmax's group kernel runs 8 blocks an SM): a change that loses
# more fails the cpu tier.
find_program(UK_PYTHON3 python3)
function(uk_plan_regret_test name table most)
  add_test(NAME plan_regret_${name}
           COMMAND ${UK_PYTHON3} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/plan_regret.py
                   ${PROJECT_SOURCE_DIR}/bench/results/${table} --describe $<TARGET_FILE:plan_describe> --top 3
                   --max-regret ${most} ${ARGN})
  set_tests_properties(plan_regret_${name} PROPERTIES LABELS cpu)
endfunction()
if(UKERN_BUILD_TESTS AND UK_PYTHON3)
  uk_plan_regret_test(col_sums col-plans-2026-11-28-h200-s26-all.jsonl 9.5)
  uk_plan_regret_test(argmax argmax-plans-2026-11-28-h200-s26.jsonl 5.6)
  uk_plan_regret_test(row_argmax row-plans-2026-11-28-h200-s26-argmax.jsonl 1.6 --per-sm 8)
  uk_plan_regret_test(row_sums row-plans-2026-11-28-h200-s26-sum.jsonl 1.6)
endif()
