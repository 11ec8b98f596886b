# The Debian packages (`cpack -G DEB` in the build directory; docs/packaging.md), one per install
# component:
#   gpu-fabric-plugin (component "plugin", the default): what a node runs
#     /usr/bin/gpu-fabric-plugin                     (install rule in src/cli)
#     /usr/lib/systemd/system/gpu-fabric-plugin.service, /etc/default/gpu-fabric-plugin
#     /usr/share/doc/gpu-fabric-plugin/              (README.md, docs/*.md)
#     maintainer scripts from deploy/debian/ (systemd reload, restart on upgrade, stop on removal)
#   gpu-fabric-plugin-demo (component "demo"): the simulator, never on a production node by accident
#     /usr/lib/gpu-fabric-plugin/gpu-fabric-plugin-demo (sim/demo; `demo` runs it)
#     /usr/lib/gpu-fabric-plugin/libnvfm-sim.so      (sim/fm; the demo program finds it beside it)
#     /usr/lib/gpu-fabric-plugin/libgfp_apisim_openssl3_shim.so (sim/apiserver; `demo --mode=dra`)
# Runtime dependencies come from dpkg-shlibdeps (the libraries the binaries link), plus pci.ids.

# cpack installs the project without building `all` first (the tests): it packages only what
# scripts/build.sh builds.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/gpu-fabric-plugin.service
        DESTINATION lib/systemd/system)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/gpu-fabric-plugin.default
        DESTINATION /etc/default RENAME gpu-fabric-plugin)
file(GLOB gfp_doc_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${gfp_doc_files}
        DESTINATION share/doc/gpu-fabric-plugin)

# dpkg keeps an operator's edits of /etc/default/gpu-fabric-plugin across upgrades.
set(gfp_conffiles ${PROJECT_BINARY_DIR}/debian/conffiles)
file(WRITE ${gfp_conffiles} "/etc/default/gpu-fabric-plugin\n")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpu-fabric-plugin)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "gpu-fabric-plugin maintainers <gpu-fabric-plugin@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Kubernetes device plugin handing NVIDIA GPUs to KubeVirt VMs, with Fabric Manager partitions")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Without pci.ids, resources are named by raw device id, not as NVIDIA's plugin names them.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "pci.ids")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL plugin demo)
set(CPACK_DEBIAN_PLUGIN_PACKAGE_NAME gpu-fabric-plugin)
set(CPACK_DEBIAN_PLUGIN_PACKAGE_CONTROL_EXTRA
    ${gfp_conffiles} ${PROJECT_SOURCE_DIR}/deploy/debian/postinst
    ${PROJECT_SOURCE_DIR}/deploy/debian/prerm ${PROJECT_SOURCE_DIR}/deploy/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_DEMO_PACKAGE_NAME gpu-fabric-plugin-demo)
set(CPACK_DEBIAN_DEMO_PACKAGE_DEPENDS "gpu-fabric-plugin (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_DEMO_DESCRIPTION
    "gpu-fabric-plugin's demo: a simulated HGX node and Fabric Manager (not for production nodes)")
include(CPack)
