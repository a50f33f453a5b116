# Multi-stage image on Debian 12: build with the same packages scripts/install-deps.sh uses, run
# as non-root with only the runtime libraries.
FROM debian:12 AS build
WORKDIR /src
COPY . .
RUN scripts/install-deps.sh && \
    scripts/build.sh /build -DCMAKE_BUILD_TYPE=Release -DGPUSCHED_BUILD_TESTS=OFF \
      -DGPUSCHED_BUILD_BENCH=OFF -- gpusched

FROM debian:12-slim
RUN apt-get update -q && apt-get install -y -q --no-install-recommends \
      libcpp-httplib0.11 libsimdjson14 libyaml-cpp0.7 libspdlog1.10 libcurl4 ca-certificates && \
    rm -rf /var/lib/apt/lists/*
COPY --from=build /build/gpusched /usr/local/bin/gpusched
USER 65532:65532
EXPOSE 8888
ENTRYPOINT ["/usr/local/bin/gpusched"]
CMD ["serve", "--listen=0.0.0.0:8888"]
