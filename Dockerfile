# Multi-stage image on Debian 12: build with the same packages scripts/install-deps.sh uses, run
# as non-root with only the runtime libraries.
FROM debian:12 AS build
WORKDIR /src
COPY . .
RUN scripts/install-deps.sh && \
    scripts/build.sh /build -DCMAKE_BUILD_TYPE=Release -DGPUSCHED_BUILD_TESTS=OFF \
      -DGPUSCHED_BUILD_BENCH=OFF -DGPUSCHED_UNITY_BUILD=ON -- gpusched

# The runtime packages are the ones scripts/runtime-packages.txt lists, and no others:
# tests/image/runtime_packages_check.sh derives them from what the binary loads, and
# tests/image/runtime_rootfs_test.sh builds this stage's root filesystem from them and starts the
# binary in it as this USER, with the Deployment's arguments.
FROM debian:12-slim
COPY scripts/runtime-packages.txt /tmp/runtime-packages.txt
RUN apt-get update -q && \
    sed 's/#.*//' /tmp/runtime-packages.txt | xargs apt-get install -y -q --no-install-recommends && \
    rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt
COPY --from=build /build/gpusched /usr/local/bin/gpusched
USER 65532:65532
EXPOSE 8888 9090
ENTRYPOINT ["/usr/local/bin/gpusched"]
# manifests/base/deployment.yaml passes these and --policy (its ConfigMap's mount).
CMD ["serve", "--listen=0.0.0.0:8888", "--ops-listen=0.0.0.0:9090"]
