# view: the state of the classroom view (steps, clock, heads, modes), no display.
attnviz_add_test(test_view SOURCES ${ATTNVIZ_TESTS_DIR}/test_view.c LIBS attnviz_view)
# every lesson through the View in every mode: the compare view's panes agree,
# the single-head and compare views narrate what is drawn, formula labels
attnviz_add_test(test_view_lessons SOURCES ${ATTNVIZ_TESTS_DIR}/test_view_lessons.c LIBS attnviz_view)

# `attnviz show` refuses a step 0 (steps count from 1), an unknown weight
# scale and an unknown notation with exit status 2 and one line naming the
# option, before opening any window.
add_test(NAME show_refuses_bad_view_options
         COMMAND sh -c "for a in '--step 0' '--weight-scale rows' '--notation col'; do out=$(\"$0\" show $a 2>&1 >/dev/null); rc=$?; opt=\${a%% *}; [ $rc -eq 2 ] && [ $(printf '%s\\n' \"$out\" | wc -l) -eq 1 ] && printf '%s' \"$out\" | grep -qF -- \"$opt\" || { echo \"show $a: status $rc: $out\"; exit 1; }; done"
                 $<TARGET_FILE:attnviz>)
