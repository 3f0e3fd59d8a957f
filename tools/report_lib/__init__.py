"""tools/report_lib: helpers of tools/report (build, run, parse, print, plot, compare)."""
