# IPython profile for kernels started by `mcpkit-course build` and `mcpkit-course grade`:
# plain tracebacks (no colour codes, last line only) and no history file.
c = get_config()  # noqa: F821
c.InteractiveShell.colors = "nocolor"
c.InteractiveShell.xmode = "Minimal"
c.HistoryManager.enabled = False
# Only errors from the kernel application itself (not its TCP-transport warning).
c.Application.log_level = "ERROR"
