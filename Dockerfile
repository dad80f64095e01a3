# skillserver container image: the static binaries and two empty mount
# points, on scratch. Build it with `make docker`, which cross-compiles
# bin/linux-ARCH/skillserver and skillserver-export for each platform and
# makes bin/image-root/ first; this file does not compile or run anything, so it needs no base
# image, no network and no emulation for a foreign architecture.
# TARGETARCH is set by the builder from --platform.
#
# The image holds only:
#   /skillserver            the binary (entrypoint), built without the
#                           bucket drivers: serve and the healthcheck
#                           start in half the memory
#   /skillserver-export     the full build, which `skillserver export`
#                           runs for an s3://, gs:// or azblob:// --out
#   /skills, /agents        empty directories owned by 65532:65532, the
#                           default roots; mount the real trees over them
#   /var/lib/skillserver    an empty directory owned by 65532:65532, where
#                           state_dir "auto" keeps the blobs and the scan
#                           cache (XDG_STATE_HOME=/var/lib); mount a
#                           writable volume there. Without one, on a
#                           read-only root, the bytes are held in memory
# There is no shell, no /etc/passwd, no CA bundle and no /tmp: skillserver
# needs none of them (it reads the mounted trees, listens and logs to
# stderr). See docs/operations.md.
#
# The licenses label is the SPDX identifier of LICENSE.
FROM scratch

ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z

LABEL org.opencontainers.image.title="skillserver" \
      org.opencontainers.image.description="Publishes AI-agent skills and sub-agents from a directory over the Agent Skills Discovery RFC feed and a digest-pinned HTTP API" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.source="https://github.com/skillserver/skillserver" \
      org.opencontainers.image.licenses="Apache-2.0"

COPY --chown=65532:65532 bin/image-root/ /
ARG TARGETARCH
COPY bin/linux-${TARGETARCH}/skillserver bin/linux-${TARGETARCH}/skillserver-export /

USER 65532:65532
ENV SKILLSERVER_SKILLS=/skills \
    SKILLSERVER_AGENTS=/agents \
    XDG_STATE_HOME=/var/lib
EXPOSE 8080

HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["/skillserver", "healthcheck"]

ENTRYPOINT ["/skillserver"]
CMD ["serve"]
