# man.cmake: attnviz.1, the man page, from the program's own --help.
#
#   cmake -DATTNVIZ=PATH -DDATA_DIR=DIR -DOUT=FILE -P man.cmake
#
# help2man turns `attnviz --help` and `--version` into the page; each
# subcommand's --help follows in a COMMANDS section, word for word. The
# program runs with ATTNVIZ_DATA_DIR=DATA_DIR, so that the folders the help
# names are the installed ones (or a placeholder the install step fills in),
# not the build machine's source tree.
find_program(HELP2MAN help2man REQUIRED)
set(ENV{ATTNVIZ_DATA_DIR} "${DATA_DIR}")
set(ENV{LC_ALL} C.UTF-8)

set(include "[NAME]\nattnviz \\- attention, step by step, for the classroom\n\n[COMMANDS]\n")
foreach(cmd show trace check list export bench)
  execute_process(COMMAND ${ATTNVIZ} ${cmd} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "attnviz ${cmd} --help failed (${rc})")
  endif()
  # roff: a backslash is \e, and a line starting with . or ' is text
  string(REPLACE "\\" "\\e" help "${help}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
  string(APPEND include ".SS \"attnviz ${cmd}\"\n.nf\n${help}.fi\n")
endforeach()
string(APPEND include "
[ENVIRONMENT]
.TP
.B ATTNVIZ_DATA_DIR
The folder of attnviz's data, laid out as the installed one: \\fIlessons/\\fR and \\fIfonts/\\fR.
Without it attnviz reads \\fI${DATA_DIR}\\fR, found beside the program (\\fI../share/attnviz\\fR from its folder).
.TP
.B ATTNVIZ_LESSONS
The lessons folder alone.
.TP
.B ATTNVIZ_ASSETS
The folder holding \\fIfonts/\\fR alone.
.TP
.B ATTNVIZ_FRAME_LOG
A file the window writes one line per frame to (its times and step).

[FILES]
.TP
.I ${DATA_DIR}/lessons/
The lessons, one JSON file each; \\fIFORMAT.md\\fR there describes the format.
.TP
.I ${DATA_DIR}/fonts/
DejaVu Sans and a subset of Noto Sans CJK SC, used when fontconfig finds neither font.
")
file(WRITE ${OUT}.include "${include}")
execute_process(COMMAND ${HELP2MAN} --no-info --no-discard-stderr --section 1 --include ${OUT}.include
                        --output ${OUT} ${ATTNVIZ} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed (${rc})")
endif()
