# Edits headless: `attnviz trace --set/--scale` against PyTorch on the engine's
# fixture configurations (skipped without Debian's python3-torch), and a bad
# --set exits 2 with one line naming it.
add_test(NAME set_vs_pytorch
         COMMAND sh -c "if /usr/bin/python3 -c 'import torch' 2>/dev/null; then exec /usr/bin/python3 \"$0\" \"$1\" \"$2\"; else exit 77; fi"
                 ${ATTNVIZ_TESTS_DIR}/test_set_pytorch.py $<TARGET_FILE:attnviz> ${CMAKE_CURRENT_BINARY_DIR}/set_vs_pytorch)
set_tests_properties(set_vs_pytorch PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME set_bad_exits_2
         COMMAND sh -c "for cmd in trace \"export -o $1\" show; do for s in 'W_Q[9][0]=1' 'W_Z[0][0]=1' 'X[0][0]=abc' 'X[0][0]=nan' 'X[0][0]=3e38'; do out=$(\"$0\" $cmd mhsa-wo-xihuan-paobu --set \"$s\" 2>&1 >/dev/null); rc=$?; echo \"$cmd: $out\"; [ $rc -eq 2 ] && [ $(printf '%s\\n' \"$out\" | wc -l) -eq 1 ] && printf '%s' \"$out\" | grep -qF -e \"--set '$s'\" || exit 1; done; done; [ ! -e \"$1\" ]"
                 $<TARGET_FILE:attnviz> ${CMAKE_CURRENT_BINARY_DIR}/set_bad_export)
# --tokens refuses what a lesson file may not hold: bytes that are not UTF-8,
# control characters (C0, DEL, C1 such as U+0085 and U+009B): exit 2, one
# line naming --tokens, nothing written.
add_test(NAME tokens_bad_exits_2
         COMMAND sh -c "for cmd in trace \"export -o $1\" show; do for t in 'a\\377 b' 'a\\302\\205 b' 'a\\302\\233[31m b' 'a\\033[31m b' 'a\\177 b' 'a\\300\\200 b'; do tok=$(printf \"$t\"); out=$(\"$0\" $cmd mhsa-wo-xihuan-paobu --tokens \"$tok\" 2>&1 >/dev/null); rc=$?; echo \"$cmd $t: $out\"; [ $rc -eq 2 ] && [ $(printf '%s\\n' \"$out\" | wc -l) -eq 1 ] && printf '%s' \"$out\" | grep -q -e '--tokens: token 0' || exit 1; printf '%s' \"$out\" | LC_ALL=C grep -q \"$(printf '[\\033\\177\\205\\233\\377]')\" && exit 1; done; done; [ ! -e \"$1\" ]"
                 $<TARGET_FILE:attnviz> ${CMAKE_CURRENT_BINARY_DIR}/tokens_bad_export)
# Editing in the real window with keys alone (Xvfb, xdotool): E, arrows, a
# typed value, Enter, Ctrl+S; the saved lesson passes check and its trace
# carries the edit downstream. Skipped without xvfb-run.
find_program(ATTNVIZ_XVFB_RUN xvfb-run)
if(ATTNVIZ_XVFB_RUN)
  add_test(NAME edit_e2e
           COMMAND ${ATTNVIZ_XVFB_RUN} -a -s "-screen 0 1280x800x24"
                   ${ATTNVIZ_TESTS_DIR}/e2e/edit_e2e.sh $<TARGET_FILE:attnviz>)
else()
  add_test(NAME edit_e2e COMMAND sh -c "echo 'SKIP: xvfb-run is not installed (apt-get install xvfb)'; exit 77")
endif()
set_tests_properties(edit_e2e PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180 RESOURCE_LOCK xvfb
                     ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
# Reflex keys never lose an edit (Xvfb, xdotool): with unsaved edits a second
# Esc shows a notice instead of quitting, the edit is kept in a recovery file,
# and the next window restores it with Y.
if(ATTNVIZ_XVFB_RUN)
  add_test(NAME unsaved_e2e
           COMMAND ${ATTNVIZ_XVFB_RUN} -a -s "-screen 0 1280x800x24"
                   ${ATTNVIZ_TESTS_DIR}/e2e/unsaved_e2e.sh $<TARGET_FILE:attnviz>)
else()
  add_test(NAME unsaved_e2e COMMAND sh -c "echo 'SKIP: xvfb-run is not installed (apt-get install xvfb)'; exit 77")
endif()
set_tests_properties(unsaved_e2e PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180 RESOURCE_LOCK xvfb
                     ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
# The pointer's tools (Xvfb, xdotool): ink and a drag change the frame, the
# stroke comes back with its step and into a saved frame, X clears it; the
# spotlight, the laser and B's black screen change the frame.
if(ATTNVIZ_XVFB_RUN)
  add_test(NAME ink_e2e
           COMMAND ${ATTNVIZ_XVFB_RUN} -a -s "-screen 0 1280x800x24"
                   ${ATTNVIZ_TESTS_DIR}/e2e/ink_e2e.sh $<TARGET_FILE:attnviz>)
else()
  add_test(NAME ink_e2e COMMAND sh -c "echo 'SKIP: xvfb-run is not installed (apt-get install xvfb)'; exit 77")
endif()
set_tests_properties(ink_e2e PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180 RESOURCE_LOCK xvfb
                     ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
# attnviz check refuses a narration condition that is false for the lesson's
# own numbers: exit 2, one line naming the key, its line and column.
add_test(NAME check_false_condition
         COMMAND sh -c "sed 's/{row_max_token:1} == 跑步/{row_max_token:1} == 我/' \"$1\" > \"$2\" || exit 1; out=$(\"$0\" check \"$2\" 2>&1); rc=$?; echo \"$out\"; [ $rc -eq 2 ] && [ $(echo \"$out\" | wc -l) -eq 1 ] && echo \"$out\" | grep -qE \"^$2:[0-9]+:[0-9]+: narration.weights_1.when \\(step weights_1\\): the condition .* is false for the lesson's own numbers$\""
                 $<TARGET_FILE:attnviz> ${PROJECT_SOURCE_DIR}/lessons/mhsa-wo-xihuan-paobu.json
                 ${CMAKE_CURRENT_BINARY_DIR}/false_condition.json)
# --presenter (Xvfb, xdotool): two windows on one screen, a key in either
# moves both on, the presenter's clock runs alone, B blacks the audience's
# window only, and the laser over the presenter's small frame shows on the
# audience's.
if(ATTNVIZ_XVFB_RUN)
  add_test(NAME presenter_e2e
           COMMAND ${ATTNVIZ_XVFB_RUN} -a -s "-screen 0 2400x1300x24"
                   ${ATTNVIZ_TESTS_DIR}/e2e/presenter_e2e.sh $<TARGET_FILE:attnviz>)
else()
  add_test(NAME presenter_e2e COMMAND sh -c "echo 'SKIP: xvfb-run is not installed (apt-get install xvfb)'; exit 77")
endif()
set_tests_properties(presenter_e2e PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180 RESOURCE_LOCK xvfb
                     ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
