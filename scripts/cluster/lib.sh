# Shared by start.sh and node.sh (sourced, not run). Expects $dir, the cluster's state directory.

# The machine's own non-loopback IPv4 address: the `kubernetes` Service's endpoint and the node's
# InternalIP. The apiserver refuses to advertise 127.0.0.1, and pods reach the host only on it.
node_address() {
  local address
  address="$(ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')"
  [[ -n "$address" ]] || address="$(hostname -I 2>/dev/null | awk '{print $1}')"
  [[ -n "$address" ]] || { echo "no non-loopback IPv4 address for the cluster to advertise" >&2; return 1; }
  echo "$address"
}

# Prints NAME=port lines, one free port each, below the kernel's ephemeral range: a port bind(0) picks
# from that range was free when picked, but an outgoing connection (etcd dials itself as soon as it
# starts) could be given it before the component listening on it started (the API server once failed
# so: "bind: address already in use"). Below the range no outgoing connection is ever given one.
free_ports() { # NAME…
  python3 - "$@" <<'PY'
import random, socket, sys
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
held = []
for name in sys.argv[1:]:
    for _ in range(1000):
        s = socket.socket()
        try:
            s.bind(("0.0.0.0", random.randint(10000, low - 1) if low > 11000 else 0))
            break
        except OSError:
            s.close()
    else:
        raise SystemExit("no free port below the ephemeral range for " + name)
    held.append(s)  # kept open until all are chosen, so no two components get the same port
    print(f"{name}={s.getsockname()[1]}")
PY
}

running() { [[ -f "$dir/pids/$1" ]] && kill -0 "$(cat "$dir/pids/$1")" 2>/dev/null; }

launch() { # name command…
  local name="$1"; shift
  if running "$name"; then return; fi
  # setsid: a component is its own process group, so stop.sh ends exactly it (and a Ctrl-C in the
  # shell that started the cluster does not).
  setsid "$@" >>"$dir/logs/$name.log" 2>&1 < /dev/null &
  echo $! > "$dir/pids/$name"
}

wait_for() { # what command… (up to 60 s)
  local what="$1"; shift
  for _ in $(seq 1 240); do "$@" >/dev/null 2>&1 && return 0; sleep 0.25; done
  echo "$what did not come up within 60 s; its log is in $dir/logs/" >&2
  return 1
}

# Ends a component started by launch: its whole process group, TERM then KILL after 10 s. Only if the
# pid file's process still runs the component's binary, so a reused pid is never hit.
end_component() { # name
  local pidfile="$dir/pids/$1" pid
  [[ -f "$pidfile" ]] || return 0
  pid="$(cat "$pidfile")"
  if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$1"; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

# A certificate signed by the cluster CA (or the CA named), made once: name subject extensions [ca].
sign() {
  [[ -f "$dir/pki/$1.crt" ]] && return
  local ca="${4:-ca}"
  local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  openssl req -new "${ec[@]}" -keyout "$dir/pki/$1.key" -out "$dir/pki/$1.csr" -subj "$2" 2>/dev/null
  openssl x509 -req -in "$dir/pki/$1.csr" -CA "$dir/pki/$ca.crt" -CAkey "$dir/pki/$ca.key" -CAcreateserial \
    -out "$dir/pki/$1.crt" -days 3650 -extfile <(printf '%s\n' "$3") 2>/dev/null
}

kubeconfig() { # file client-cert-name
  cat > "$dir/$1" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: webhook-operator-test
  cluster: {server: "https://127.0.0.1:$APISERVER_PORT", certificate-authority: "$dir/pki/ca.crt"}
users:
- name: $2
  user: {client-certificate: "$dir/pki/$2.crt", client-key: "$dir/pki/$2.key"}
contexts:
- name: webhook-operator-test
  context: {cluster: webhook-operator-test, user: $2, namespace: default}
current-context: webhook-operator-test
YAML
}
