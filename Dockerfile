# mapcommons in a container: a static binary on a distroless base, run as a
# non-root user, its data in the volume /data.
#   docker build -t mapcommons .
#   docker run -p 8080:8080 -v mapcommons-data:/data mapcommons
# The web application's assets (npm run build), which the binary embeds.
FROM node:22-bookworm-slim AS web
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY web web
RUN npm run build

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
COPY --from=web /src/web/dist web/dist
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/mapcommons ./cmd/mapcommons \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mapcommons /usr/local/bin/mapcommons
COPY --from=build --chown=nonroot:nonroot /out/data /data
USER nonroot:nonroot
ENV MAPCOMMONS_ADDR=0.0.0.0:8080 MAPCOMMONS_DATA=/data
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=6s --start-period=10s CMD ["/usr/local/bin/mapcommons", "health"]
ENTRYPOINT ["/usr/local/bin/mapcommons"]
CMD ["serve"]
