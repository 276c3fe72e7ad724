# syntax=docker/dockerfile:1
#
# The solr-dedup worker image: a Rust build stage, then a slim Debian runtime holding only the binary.
#
#   docker build -t solr-dedup .
#   docker run --rm -e SOLR_URL=http://solr.example:8983/solr/collection1 solr-dedup run
#
# docker-compose.yml builds this as the `worker` service. RUST_VERSION pins the toolchain
# (`--build-arg RUST_VERSION=1.89`); the default is the newest stable 1.x. The builder and the runtime
# are both Debian bookworm, so the binary finds the glibc it was linked against.

ARG RUST_VERSION=1

FROM rust:${RUST_VERSION}-slim-bookworm AS builder
WORKDIR /src
# The whole crate, as .dockerignore filters it: Cargo.toml names the test and bench targets, and
# cargo wants their files to exist even when it builds only the binary.
COPY . .
# The registry and target caches persist between builds (BuildKit, the default builder of docker
# compose v2); the binary is copied out of the cache within the same step.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin solr-dedup \
    && install -m 0755 target/release/solr-dedup /usr/local/bin/solr-dedup

FROM debian:bookworm-slim AS runtime
# CA certificates for Solr behind https. Not pinned to a version: the image should get the
# distribution's current certificates whenever it is rebuilt.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/*
# An unprivileged user; the worker needs no file system access beyond an optional report file.
RUN groupadd --system --gid 10001 solr-dedup \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin solr-dedup \
    && install -d -o 10001 -g 10001 -m 0750 /var/lib/solr-dedup
# /var/lib/solr-dedup: serve's state (run history, rules.json); a named volume mounted there starts
# out owned by the user, as the image's directory is.
COPY --from=builder /usr/local/bin/solr-dedup /usr/local/bin/solr-dedup
USER 10001:10001
WORKDIR /tmp
ENTRYPOINT ["solr-dedup"]
CMD ["--help"]
