# Install rules (included by the top-level CMakeLists.txt): libcanopy.so.* and
# libcanopy.a, the public headers, the CLI, a CMake package (canopyConfig.cmake
# and the exported targets) and a pkg-config file (canopy.pc).
# Two export sets, because their dependencies differ: canopyTargets (the
# shared library and the CLI) needs only Threads; canopyStaticTargets (the
# static library) also needs hwloc (pkg-config), fmt and -lotf2 at link time, which
# canopyConfig.cmake looks for only for it.
install(TARGETS canopy_shared canopy_cli EXPORT canopyTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS canopy EXPORT canopyStaticTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(CANOPY_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/canopy)
install(EXPORT canopyTargets NAMESPACE canopy:: DESTINATION ${CANOPY_CMAKE_DIR})
install(EXPORT canopyStaticTargets NAMESPACE canopy:: DESTINATION ${CANOPY_CMAKE_DIR})
include(CMakePackageConfigHelpers)
configure_package_config_file(cmake/canopyConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/canopyConfig.cmake
  INSTALL_DESTINATION ${CANOPY_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/canopyConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/canopyConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/canopyConfigVersion.cmake
  DESTINATION ${CANOPY_CMAKE_DIR})

# canopy.pc. Relocatable: the prefix is computed from the file's own place
# (${pcfiledir}), so a copied or moved prefix still works.
# Libs.private and Requires.private are what libcanopy.a needs besides itself
# (`pkg-config --static`): fmt through its own .pc, the C++ runtime and libm
# (a C program links with cc, which does not add them), threads, and hwloc's
# own flags from `pkg-config --libs hwloc`, not `Requires.private: hwloc`:
# Debian's hwloc.pc lists -ludev in its Libs.private, which libhwloc-dev
# does not install (and there is no static libudev, so libhwloc can only be
# linked as a shared library there anyway): a `--static` closure through
# hwloc.pc asks for a library that is not installed.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(CANOPY_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(CANOPY_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH pc_to_prefix /canopy-prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /canopy-prefix)
  string(REGEX REPLACE "/$" "" pc_to_prefix "${pc_to_prefix}")
  set(CANOPY_PC_PREFIX "\${pcfiledir}/${pc_to_prefix}")
  set(CANOPY_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(CANOPY_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(CANOPY_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# (hwloc's -L is dropped when it is one the compiler searches anyway.)
set(CANOPY_PC_HWLOC_LIBS "")
foreach(flag ${HWLOC_LDFLAGS})
  string(REGEX REPLACE "^-L" "" dir "${flag}")
  if(NOT flag MATCHES "^-L" OR NOT dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
    string(APPEND CANOPY_PC_HWLOC_LIBS " ${flag}")
  endif()
endforeach()
string(STRIP "${CANOPY_PC_HWLOC_LIBS}" CANOPY_PC_HWLOC_LIBS)
configure_file(cmake/canopy.pc.in ${CMAKE_CURRENT_BINARY_DIR}/canopy.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/canopy.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
