# view: the state of the classroom view (steps, clock, heads, modes), no display.
attnviz_add_test(test_view SOURCES ${ATTNVIZ_TESTS_DIR}/test_view.c LIBS attnviz_view)
# every lesson through the View in every mode: the compare view's panes agree,
# the single-head and compare views narrate what is drawn, formula labels
attnviz_add_test(test_view_lessons SOURCES ${ATTNVIZ_TESTS_DIR}/test_view_lessons.c LIBS attnviz_view)
# The edit model: changes, their recompute against the engine, undo, refusals.
attnviz_add_test(test_edit SOURCES ${ATTNVIZ_TESTS_DIR}/test_edit.c LIBS attnviz_view)
# + responds on every step: the default lesson exported at 1024×768 on the
# projector theme with --text-scale 1.1 (one press of +) differs from scale 1
# on every step; --big-text differs from both.
add_test(NAME text_scale_every_step
         COMMAND sh -c "rm -rf \"$1\" && mkdir -p \"$1\" && for s in 1 1.1; do \"$0\" export mhsa-wo-xihuan-paobu -o \"$1/$s\" --size 1024x768 --theme projector --text-scale $s >/dev/null || exit 1; done; \"$0\" export mhsa-wo-xihuan-paobu -o \"$1/big\" --size 1024x768 --theme projector --big-text >/dev/null || exit 1; n=0; for f in \"$1\"/1/*.png; do b=$(basename \"$f\"); n=$((n + 1)); cmp -s \"$f\" \"$1/1.1/$b\" && { echo \"+ changed nothing on $b\"; exit 1; }; cmp -s \"$f\" \"$1/big/$b\" && { echo \"--big-text changed nothing on $b\"; exit 1; }; done; echo \"+ and --big-text changed all $n steps\"; [ $n -ge 20 ]"
                 $<TARGET_FILE:attnviz> ${CMAKE_CURRENT_BINARY_DIR}/text_scale_every_step)
# A step's caption for the projector: the first sentence (English and
# Chinese boundaries), a long one shortened between words, every step of a
# shipped lesson.
attnviz_add_test(test_caption SOURCES ${ATTNVIZ_TESTS_DIR}/test_caption.c LIBS attnviz_view)
