#!/usr/bin/env bash
# deadline.sh SECONDS NAME COMMAND...: runs COMMAND in a process group of its
# own; if it is still running after SECONDS, says so, naming NAME, the PID and
# what is still alive in the group, then kills the whole group (the command,
# its children and theirs) by that PID, and exits 124. Otherwise exits with
# the command's status. test.sh runs every step that starts processes or
# workers under it, so that no suite can hang the run.
set -uo pipefail
limit=$1 name=$2
shift 2
setsid "$@" &
pid=$!
(
  trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
  sleep "$limit" &
  sleeper=$!
  wait "$sleeper"
  if kill -0 "$pid" 2>/dev/null; then
    echo "deadline: $name is still running after $limit s (pid $pid); still alive in its group:" >&2
    ps -o pid=,etimes=,args= -g "$pid" 2>/dev/null | cut -c1-160 | sed 's/^/deadline:   /' >&2
    echo "deadline: killing process group $pid" >&2
    kill -KILL -- "-$pid" 2>/dev/null
  fi
) &
watchdog=$!
wait "$pid"
status=$?
kill "$watchdog" 2>/dev/null
wait "$watchdog" 2>/dev/null
# Killed by the watchdog (SIGKILL): report it as a timeout.
[ "$status" -eq 137 ] && status=124
exit "$status"
