#!/bin/sh
# The README's and docs/gui.md's pictures, drawn by `heapscope render` from the
# bundled default trace (Vo's 1989 workload): run from the repository's root
# after a change to what the window shows.  The ring, bucket and big-heap views
# of docs/gui.md come from benchmarks/bench_structure_views.py --shots.
set -e
render() { heapscope render "$@"; }
render -s next-fit --step 2004 --size 1400x900 -o assets/screenshot.png
render -s splay-best-fit --step 5003 --part structure --size 1920x1080 -o assets/structure-tree.png
render -s buddy --step 5678 --part structure --size 1920x1080 -o assets/structure-buddy.png
render -s tlsf --step 5003 --part structure --size 1920x1080 -o assets/structure-tlsf.png
render -s tlsf --step 5003 --size 1280x720 --presenter --theme dark -o assets/presenter-dark.png
render -s next-fit -s splay-best-fit -s tlsf --step 5003 --size 1280x720 -o assets/side-by-side.png
render -s next-fit --steps 2000:2011 --part map --size 1280x720 --fps 2 -o assets/steps-next-fit.gif
python assets/compare_shots.py      # compare mode: 3 rows at 1600x1000, 7 at 1280x720
python assets/find_shot.py          # the Find panel at 1280x720 (docs/gui.md)
