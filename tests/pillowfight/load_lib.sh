# load_lib.sh: sourced by the pillowfight tests that watch a load run.
# progress_lines LOG counts the load's progress lines (one a second) in
# pillowfight's output LOG; has_progress LOG N: at least N of them.

progress_lines() { grep -c '^OPS/SEC: .*(Load' "$1" || true; }
has_progress() { [ "$(progress_lines "$1")" -ge "$2" ]; }
