# gpu-fabric-plugin image (docs/packaging.md). Build from the repository root:
#   docker build -t gpu-fabric-plugin:0.1.0 .
# libnvfm (Fabric Manager's SDK library) is not in the image: the DaemonSet mounts it from the
# host's Fabric Manager package, whose version it must match.

# Build stage: the README's own set-up, on the Debian release the project targets.
FROM debian:12 AS build
WORKDIR /src
COPY . .
RUN ./scripts/install-deps.sh && ./scripts/build.sh \
 && strip --strip-unneeded -o /gpu-fabric-plugin build/gpu-fabric-plugin

# Runtime stage: the binary, the Debian packages of the shared libraries it links, and pci.ids
# (resources are named from it). scripts/check-packaging.sh (CI) checks that every package exists
# in Debian 12 and that every library `ldd` reports for the binary comes from one of them or
# from their dependencies.
FROM debian:12-slim
ARG RUNTIME_PACKAGES="libfmt9 libgrpc++1.51 libmicrohttpd12 libprometheus-cpp-core1.0 libprotobuf32 libspdlog1.10 libsqlite3-0 libssl3 libcurl4 libyaml-cpp0.7 pci.ids"
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $RUNTIME_PACKAGES \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /gpu-fabric-plugin /usr/bin/gpu-fabric-plugin
LABEL org.opencontainers.image.title="gpu-fabric-plugin" \
      org.opencontainers.image.description="Kubernetes device plugin handing NVIDIA GPUs to KubeVirt VMs, with Fabric Manager partitions"
ENTRYPOINT ["gpu-fabric-plugin"]
CMD ["serve"]
