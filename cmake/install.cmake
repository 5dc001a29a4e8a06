# install.cmake: `cmake --install build --prefix PREFIX` and `cpack -G DEB`.
#
#   PREFIX/bin/attnviz
#   PREFIX/share/attnviz/lessons/     the lessons and FORMAT.md
#   PREFIX/share/attnviz/fonts/       the bundled fonts and their licences
#   PREFIX/share/applications/attnviz.desktop
#   PREFIX/share/icons/hicolor/{scalable,NxN}/apps/attnviz.{svg,png}
#   PREFIX/share/man/man1/attnviz.1.gz  made from the built program's --help
#
# The program finds share/attnviz from its own folder (src/app/common.c), so
# the installed tree works wherever it is put.
include(GNUInstallDirs)
set(ATTNVIZ_DATA_DEST ${CMAKE_INSTALL_DATADIR}/attnviz)

install(TARGETS attnviz RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/lessons/ DESTINATION ${ATTNVIZ_DATA_DEST}/lessons
        FILES_MATCHING PATTERN "*.json" PATTERN "FORMAT.md")
install(FILES ${PROJECT_SOURCE_DIR}/assets/fonts/DejaVuSans.ttf ${PROJECT_SOURCE_DIR}/assets/fonts/NotoSansCJKsc-Subset.otf
              ${PROJECT_SOURCE_DIR}/assets/fonts/LICENSE-DejaVu.txt
              ${PROJECT_SOURCE_DIR}/assets/fonts/LICENSE-NotoSansCJK.txt ${PROJECT_SOURCE_DIR}/assets/fonts/README.md
        DESTINATION ${ATTNVIZ_DATA_DEST}/fonts)
install(FILES ${PROJECT_SOURCE_DIR}/assets/attnviz.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${PROJECT_SOURCE_DIR}/assets/icons/attnviz.svg
        DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
foreach(size 16 32 48 64 128 256)
  install(FILES ${PROJECT_SOURCE_DIR}/assets/icons/attnviz-${size}.png
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps RENAME attnviz.png)
endforeach()

# The man page, from the built program (help2man; tools/setup.sh installs
# it). Built with a placeholder where the data folder goes, which the
# install step replaces with the prefix installed to (cmake --install
# --prefix, or /usr in the .deb).
find_program(ATTNVIZ_HELP2MAN help2man)
find_program(ATTNVIZ_GZIP gzip)
if(ATTNVIZ_HELP2MAN AND ATTNVIZ_GZIP)
  set(_man ${PROJECT_BINARY_DIR}/attnviz.1.in)
  add_custom_command(
    OUTPUT ${_man}
    COMMAND ${CMAKE_COMMAND} -DATTNVIZ=$<TARGET_FILE:attnviz> -DDATA_DIR=@ATTNVIZ_DATA_DIR@ -DOUT=${_man} -P
            ${PROJECT_SOURCE_DIR}/cmake/man.cmake
    DEPENDS attnviz ${PROJECT_SOURCE_DIR}/cmake/man.cmake
    COMMENT "Writing the man page attnviz.1 from attnviz --help")
  add_custom_target(attnviz_man ALL DEPENDS ${_man})
  install(CODE "
    set(_dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_MANDIR}/man1\")
    file(READ \"${_man}\" _page)
    string(REPLACE \"@ATTNVIZ_DATA_DIR@\" \"\${CMAKE_INSTALL_PREFIX}/${ATTNVIZ_DATA_DEST}\" _page \"\${_page}\")
    file(MAKE_DIRECTORY \"\${_dir}\")
    file(WRITE \"\${_dir}/attnviz.1\" \"\${_page}\")
    message(STATUS \"Installing: \${_dir}/attnviz.1.gz\")
    execute_process(COMMAND ${ATTNVIZ_GZIP} -9nf \"\${_dir}/attnviz.1\" COMMAND_ERROR_IS_FATAL ANY)")
else()
  message(STATUS "help2man or gzip not found: no man page (apt-get install help2man)")
endif()

# The Debian package. Its Depends come from dpkg-shlibdeps, which reads the
# libraries the binary links (SDL2, SDL2_ttf, cJSON, libpng, fontconfig,
# cairo when found, libc); the fonts fontconfig finds first are recommended.
set(CPACK_PACKAGE_NAME attnviz)
set(CPACK_PACKAGE_VENDOR attnviz)
set(CPACK_PACKAGE_CONTACT "attnviz <attnviz@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION
    "attnviz computes scaled dot-product and multi-head attention exactly, keeps every number it computed, \
and animates each step as heatmaps, in Chinese and English, with lessons that follow five Chinese tutorials \
on attention. Every frame can be exported as a PNG.")
set(CPACK_PACKAGE_INSTALL_DIRECTORY attnviz)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION education)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "fonts-dejavu-core, fonts-noto-cjk")
set(CPACK_GENERATOR DEB)
include(CPack)
