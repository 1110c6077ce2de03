# Parapet in a container: the first stage builds the release archive from this repository, the
# second runs it on a Java 21 runtime (no JDK, no Maven) as an unprivileged user.
#
#   docker build -t parapet .
#   docker run --rm -p 8080:8080 parapet                                    # examples/docker/parapet.yaml
#   docker run --rm -p 8080:8080 -v "$PWD/edge.yaml:/etc/parapet/parapet.yaml:ro" parapet
#
# docker stop sends SIGTERM: the proxy stops accepting, drains requests in flight for up to
# drain_timeout (10 s by default; --drain-timeout overrides it), then exits 0; give it the time
# (docker stop -t 40 leaves room for a drain of 30 s).
# docker kill -s HUP reloads /etc/parapet/parapet.yaml.

FROM maven:3.9-eclipse-temurin-21 AS build
WORKDIR /src
COPY . .
RUN mvn -B -ntp package -pl parapet-proxy -am -DskipTests -Dspotless.check.skip=true -Djacoco.skip=true \
 && mkdir /dist \
 && tar -xzf parapet-proxy/target/parapet-*.tar.gz -C /dist --strip-components=1

FROM eclipse-temurin:21-jre
RUN groupadd --system parapet \
 && useradd --system --gid parapet --home-dir /opt/parapet --no-create-home --shell /usr/sbin/nologin parapet
COPY --from=build /dist /opt/parapet
COPY examples/docker/parapet.yaml /etc/parapet/parapet.yaml
USER parapet:parapet
EXPOSE 8080
STOPSIGNAL SIGTERM
ENTRYPOINT ["/opt/parapet/bin/parapet"]
CMD ["run", "-c", "/etc/parapet/parapet.yaml"]
