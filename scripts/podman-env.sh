# Sourced by scripts/image.sh and scripts/deploy-test.sh: podman the only way
# it runs on the development and CI machines (../shared/containers.md):
# Debian's runc (crun fails: cgroups in hybrid mode), the cgroupfs manager,
# no default ulimits (setting RLIMIT_NOFILE/NPROC is not permitted), host
# networking. PODMAN overrides the whole command (e.g. plain "podman"
# elsewhere).
if [ -z "${CONTAINERS_CONF:-}" ]; then
  CONTAINERS_CONF=${TMPDIR:-/tmp}/shipgraph-containers.conf
  printf '[containers]\ndefault_ulimits = []\npids_limit = 0\n' >"$CONTAINERS_CONF"
  export CONTAINERS_CONF
fi
if [ -z "${PODMAN:-}" ]; then
  PODMAN="podman --cgroup-manager=cgroupfs"
  [ -x /usr/sbin/runc ] && PODMAN="podman --runtime /usr/sbin/runc --cgroup-manager=cgroupfs"
fi
# shellcheck disable=SC2086
P() { $PODMAN "$@"; }
