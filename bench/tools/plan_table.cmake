# The reduction planner offline (bench/tools/plan_regret.py): its plan and the forced plans
# for a table of shapes, no driver needed.
add_executable(plan_describe ${CMAKE_CURRENT_LIST_DIR}/plan_describe.c)
target_link_libraries(plan_describe PRIVATE ukern_internal)
# The planner against the committed H200 tables (session 24's final build: 5.1 us over 83
# column sums, 3.0 us over 22 argmax shapes): a change that loses more fails the cpu tier.
find_program(UK_PYTHON3 python3)
function(uk_plan_regret_test name table most)
  add_test(NAME plan_regret_${name}
           COMMAND ${UK_PYTHON3} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/plan_regret.py
                   ${PROJECT_SOURCE_DIR}/bench/results/${table} --describe $<TARGET_FILE:plan_describe> --top 3
                   --max-regret ${most})
  set_tests_properties(plan_regret_${name} PROPERTIES LABELS cpu)
endfunction()
if(UKERN_BUILD_TESTS AND UK_PYTHON3)
  uk_plan_regret_test(col_sums col-plans-2026-11-28-h200-final-all.jsonl 7)
  uk_plan_regret_test(argmax argmax-plans-2026-11-28-h200.jsonl 4.5)
endif()
