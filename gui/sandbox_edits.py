"""The sandbox in the window: a trace made and changed by hand.

:class:`SandboxEdits` is the window's part for it.  It keeps the
:class:`~heapscope.sandbox.Sandbox` of the shown trace (made on the first
edit of a trace read from a file or generated, or by File > New), turns the
window's commands into its edits, and shows each edit through the show
model (:meth:`~heapscope.gui.show_model.ShowModel.replace_trace`): every
shown timeline, every compare row, is rebuilt from the edit on and the new
operation plays with its animation and explain text, as a step does.

Commands (each an action with its keys, in File and Edit):

* File > New (Ctrl+N): an empty trace; Save (Ctrl+S) and Save As
  (Ctrl+Shift+S): a .rep, its header computed, or the readable ``.heap``
  form; the title shows ``*`` while there are unsaved changes, and closing
  then asks (Save / Discard / Cancel);
* Edit > Undo (Ctrl+Z), Redo (Ctrl+Shift+Z, Ctrl+Y), each showing the step
  it left; Malloc… (M) after the shown step; Free Selected Block (Del) and
  Realloc Selected Block… (R); Cut What Follows an Insertion (Ctrl+Shift+X,
  remembered in the settings: else what follows stays and replays on the
  changed heap, operations it makes meaningless marked and skipped);
* a right click on a used block of the heap map or of a structure view (of
  any compare row): Free this block, Realloc this block…, Malloc… after this
  step -- one menu, :meth:`SandboxEdits.open_block_menu`, whichever drawing
  the block was clicked in.

Dialogs are opened without blocking (``open()``), so that tests answer them
as a person does: :attr:`size_dialog`, :attr:`block_menu`, :attr:`close_box`.
"""

from __future__ import annotations

import gzip
import os

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMenu, QMessageBox, QProgressDialog

from heapscope.allocators.replay import ReplayCancelled, Timeline
from heapscope.allocators.user import StopUserCode
from heapscope.sandbox import CUT, KEEP, Sandbox, Splice
from heapscope.traces.errors import TraceError
from heapscope.traces.readable import looks_readable, read_lines, unmark_skipped

from . import heap_cells
from .window_menus import action

SAVE_FILTER = "readable traces (*.heap);;.rep traces (*.rep)"
#: the settings key of Cut What Follows an Insertion
CUT_SETTING = "sandbox/cut_after_insert"
#: the largest size the size dialog takes (QInputDialog's ints are 32-bit)
MAX_DIALOG_SIZE = 2**31 - 1


class SandboxEdits(QObject):
    #: the sandbox changed: the edit (an undo's reversed, a redo's) just shown,
    #: or None (a save); the panels refresh
    changed = Signal(object)
    #: the trace was written to a file (its path): the file watch ignores that change
    saved = Signal(str)
    #: an undo or a redo is about to be made (the trace editor reads what was typed first)
    before_undo = Signal()

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.model = window.model
        self.sandbox: Sandbox | None = None
        self.size_dialog: QInputDialog | None = None
        self.block_menu: QMenu | None = None
        self.close_box: QMessageBox | None = None
        #: what a save to .rep left out (the lines the replay skips), while it is shown
        self.save_note: QMessageBox | None = None
        #: () -> the trace editor's lines to save, or None (set by the editor)
        self.editor_lines = lambda: None
        #: the close was answered (Save or Discard): the next close goes through
        self._close_answered = False
        self._hooked: set = set()
        self._progress: QProgressDialog | None = None
        self._replaying = False         # an edit's replay runs (its dialog processes events)
        self._make_actions()
        self._hook_map(window.heap_map, lambda: 0)
        self._hook_structure(window.structure_panel)
        self.model.shown_changed.connect(self._hook_compare_rows)
        # rows made later join the view a turn at a time (CompareView._join_next)
        window.compare.view.row_joined.connect(self._hook_compare_rows)
        self.model.trace_changed.connect(self.refresh)

    def _make_actions(self) -> None:
        w = self.window
        self.act_new = action(w, "&New Trace", self.new_trace, ["Ctrl+N"],
                              tip="An empty trace, to write by hand (Malloc…, the trace editor)")
        self.act_save = action(w, "&Save Trace", self.save, ["Ctrl+S"],
                               tip="Save the trace (.heap, the readable form, or .rep)")
        self.act_save_as = action(w, "Save Trace &As…", self.save_as, ["Ctrl+Shift+S"])
        self.act_undo = action(w, "&Undo", self.undo, ["Ctrl+Z"])
        self.act_redo = action(w, "&Redo", self.redo, ["Ctrl+Shift+Z", "Ctrl+Y"])
        self.act_malloc = action(w, "&Malloc…", self.ask_malloc, ["M"],
                                 tip="Ask for a block after the shown step")
        self.act_free = action(w, "&Free Selected Block", self.free_selected, ["Del"],
                               tip="Free the selected block after the shown step")
        self.act_realloc = action(w, "Re&alloc Selected Block…", self.realloc_selected, ["R"],
                                  tip="Resize the selected block after the shown step")
        self.act_cut = action(w, "&Cut What Follows an Insertion", self._cut_toggled,
                              ["Ctrl+Shift+X"],
                              tip="On: an operation inserted drops the rest of the trace; off: "
                                  "the rest replays on the changed heap")
        self.act_cut.setCheckable(True)
        self.act_cut.setChecked(setting_bool(w.settings.value(CUT_SETTING, False)))
        self.refresh()

    def fill_menus(self, file_menu, edit_menu) -> None:
        """Put the commands in File (New before Open; Save after the
        examples) and in the Edit menu."""
        first = file_menu.actions()[0] if file_menu.actions() else None
        file_menu.insertAction(first, self.act_new)
        for act in (self.act_undo, self.act_redo):
            edit_menu.addAction(act)
        edit_menu.addSeparator()
        for act in (self.act_malloc, self.act_free, self.act_realloc):
            edit_menu.addAction(act)
        edit_menu.addSeparator()
        edit_menu.addAction(self.act_cut)

    # ============================================================ reading
    @property
    def follow(self) -> str:
        """What follows an insertion: KEEP or CUT (the menu's choice)."""
        return CUT if self.act_cut.isChecked() else KEEP

    @property
    def dirty(self) -> bool:
        box = self.sandbox
        return box is not None and box.trace is self.model.trace and box.dirty

    def current(self) -> Sandbox | None:
        """The sandbox of the shown trace, made on first use (None with no trace)."""
        trace = self.model.trace
        if trace is None:
            return None
        box = self.sandbox
        if box is None or box.trace is not trace:
            box = self.sandbox = self._sandbox_of(trace)
        return box

    def _sandbox_of(self, trace) -> Sandbox:
        """A sandbox editing ``trace`` (read from a file or generated)."""
        w = self.window
        source = self.model.source
        names, lines = readable_of(source)
        box = Sandbox.of_trace(trace, names, w.strategy_params, source, lines)
        box.name = self.model.label
        return box

    def name_at(self, row: int, address: int) -> str | None:
        """The name of the used block at ``address`` in row ``row``'s heap, or None."""
        step = self.model.step(row)
        box = self.current()
        if step is None or box is None or address is None or address < 0:
            return None
        blocks = step.blocks
        i = blocks.index_at(address)
        if i < 0 or int(blocks.state[i]) != heap_cells.STATE_USED:
            return None
        ident = step.ids.get(int(blocks.payload[i]))
        return None if ident is None else box.name_of_id(ident)

    # ============================================================ commands
    def new_trace(self) -> None:
        """File > New: an empty trace through the strategy (or the compare
        rows) shown, with the window's parameters."""
        w = self.window
        if self.dirty:
            self.ask_unsaved(self._new_now, "start a new trace")
            return
        self._new_now()

    def _new_now(self) -> None:
        w = self.window
        box = self.sandbox = Sandbox(params=w.strategy_params, name="new trace")
        trace = box.trace
        names = list(w.compare.names) if w.compare.active and len(w.compare.names) >= 2 else [w.strategy_name]
        timelines = [Timeline(trace, n, w.params_for(n)).build() for n in names]
        if len(timelines) >= 2:
            w.compare.show_timelines(trace, timelines, 0, None, "new trace")
        else:
            w.show_built(trace, timelines[0], None, 0, "new trace")
        w.statusBar().showMessage("A new trace: M asks for a block, T opens the trace editor", 8000)
        self.refresh()

    def ask_malloc(self) -> None:
        """Edit > Malloc…: ask for a size, then malloc it after the shown step."""
        self._ask_size("Malloc", "Bytes to ask for (malloc):", 240, self.malloc)

    def malloc(self, size: int) -> None:
        if self.model.trace is None:
            self._new_now()
        self.edit(lambda box, step: box.malloc_after(step, int(size), self.follow))

    def free_block(self, name: str) -> None:
        self.edit(lambda box, step: box.free_after(step, name, self.follow))

    def realloc_block(self, name: str, size: int) -> None:
        self.edit(lambda box, step: box.realloc_after(step, name, int(size), self.follow))

    def ask_realloc(self, name: str) -> None:
        self._ask_size("Realloc", f"New size of {name} (realloc):", 500,
                       lambda size: self.realloc_block(name, size))

    def free_selected(self) -> None:
        self._with_selected(self.free_block)

    def realloc_selected(self) -> None:
        self._with_selected(self.ask_realloc)

    def _with_selected(self, then) -> None:
        """``then(name)`` of the selected used block, or say to select one."""
        name = self.name_at(0, self.model.selection)
        if name is None:
            self.window.statusBar().showMessage("Select a used block first (click it in the map)", 5000)
            return
        then(name)

    def _ask_size(self, title: str, label: str, value: int, then) -> None:
        dialog = self.size_dialog = QInputDialog(self.window)
        dialog.setWindowTitle(title)
        dialog.setLabelText(label)
        dialog.setInputMode(QInputDialog.IntInput)
        dialog.setIntRange(0, MAX_DIALOG_SIZE)
        dialog.setIntValue(value)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.intValueSelected.connect(once_closed(self, then))
        dialog.finished.connect(lambda _=0, d=dialog: self._dialog_closed(d))
        dialog.open()

    def _dialog_closed(self, dialog) -> None:
        if self.size_dialog is dialog:
            self.size_dialog = None
        # after the answer's edit (QInputDialog says the value after it closes)
        QTimer.singleShot(0, self.focus_back)

    def focus_back(self) -> None:
        """The keys to the window again (a dialog or the editor had them)."""
        w = self.window
        w.activateWindow()
        (w.compare.view.rows_scroll if w.compare.active else w.heap_map.plot_widget).setFocus()

    def _cut_toggled(self) -> None:
        self.window.settings.setValue(CUT_SETTING, self.act_cut.isChecked())

    # ============================================================== edits
    def edit(self, make, animate: bool = True):
        """Apply ``make(sandbox, shown step)`` (an edit of the sandbox, or
        None) and show it; the edit, or None."""
        w = self.window
        # an edit replays from the timeline built; none starts while one replays
        if w.busy or w.model.building() or self._replaying:
            w.statusBar().showMessage("Wait until the trace is replayed, then edit it", 5000)
            return None
        box = self.current()
        if box is None:
            return None
        old = self.model.trace
        edit = make(box, self.model.position)
        try:
            shown = edit is None or self.show_edit(edit, old, animate)
        except StopUserCode:            # a strategy of your own looped in its replay
            box.take_back()
            raise                       # the watch says so (gui/user_code_watch.py)
        if not shown:
            box.take_back()             # its replay was cancelled
            return None
        return edit

    def show_edit(self, edit, old_trace, animate: bool = False) -> bool:
        """Every shown timeline rebuilt for the sandbox's trace, shown at the
        edit's step; an inserted operation plays as a step does.  A long
        replay (a big trace edited near its start) shows its progress and
        can be cancelled: then nothing changes and this says False."""
        w = self.window
        box = self.sandbox
        w.animator.finish()
        w.player.pause()
        model = self.model
        timelines = [model.timeline(r) for r in range(len(model.shown))]
        progress = ReplayProgress(self.progress_dialog, len(timelines))
        self._replaying = True
        try:
            new = box.replayed(timelines, old_trace, w.params, w.check_steps.params,
                               progress=progress.report, cancel=progress.cancelled)
            if progress.cancelled():    # clicked in the last report's setValue: all replayed
                raise ReplayCancelled(len(box.trace))
        except ReplayCancelled:
            w.statusBar().showMessage("Edit cancelled: its replay was stopped", 5000)
            return False
        finally:
            self._replaying = False
            if progress.close():        # the keys back from the dialog (shown, modal)
                self.focus_back()
        w.strategy_params = {k: dict(v) for k, v in box.params.items() if v}
        step = edit.step_after
        plays = (animate and isinstance(edit, Splice) and edit.inserted
                 and step == edit.step_before + 1)
        model.replace_trace(box.trace, new, step - 1 if plays else step, box.checked.names)
        if plays:
            w.animator.step_to(step)
        w.sync_strategy_widgets()
        w.trace_label.setText(f"{model.label} · {model.n:,} steps")
        self.refresh()
        self.changed.emit(edit)
        return True

    def progress_dialog(self) -> QProgressDialog:
        """The dialog of a long replay after an edit (made once, kept)."""
        if self._progress is None:
            dialog = self._progress = QProgressDialog("Replaying the edited trace…", "Cancel", 0, 1000,
                                                      self.window)
            dialog.setWindowModality(Qt.WindowModal)
            dialog.setMinimumDuration(0)
            dialog.setAutoClose(False)
            dialog.setAutoReset(False)
        self._progress.reset()
        return self._progress

    def undo(self) -> None:
        self._undo_redo(lambda box: box.undo(), lambda box: box.redo())

    def redo(self) -> None:
        self._undo_redo(lambda box: box.redo(), lambda box: box.undo())

    def _undo_redo(self, move, back) -> None:
        self.before_undo.emit()
        box = self.current()
        if box is None or self.window.busy or self.model.building() or self._replaying:
            return
        old = self.model.trace
        edit = move(box)
        try:
            shown = edit is None or self.show_edit(edit, old)
        except StopUserCode:
            back(box)
            raise
        if not shown:
            back(box)                   # cancelled: where it was

    # =============================================================== saving
    def save(self) -> bool:
        """File > Save: to the file the trace came from when it is a .rep or
        a .heap, else ask where; whether it was saved."""
        box = self.current()
        if box is None:
            return False
        path = box.path
        if path and path.lower().endswith((".rep", ".heap")):
            return self.save_to(path)
        return self.save_as()

    def save_as(self) -> bool:
        box = self.current()
        if box is None:
            return False
        start = box.path or os.path.join(os.getcwd(), "demo.heap")
        path, _ = QFileDialog.getSaveFileName(self.window, "Save the trace", start, SAVE_FILTER)
        return bool(path) and self.save_to(path)

    def save_to(self, path: str) -> bool:
        """Write the trace to ``path`` (.heap: the readable form, else .rep);
        a dialog says why when it cannot be written."""
        box = self.current()
        w = self.window
        try:
            skipped = box.save(path, self.editor_lines())
        except TraceError as exc:
            w.show_error("Cannot save the trace", f"heapscope could not write {path}.", str(exc))
            return False
        self.model.set_source(path)
        w.recent.remember(path)
        self.saved.emit(path)
        self._say_saved(path, skipped, box.lines is not None and box.path == path
                        and path.lower().endswith((".heap", ".heap.gz")))
        self.refresh()
        self.window_title()
        return True

    def _say_saved(self, path: str, skipped: list, readable: bool) -> None:
        """The status bar says it was saved; the lines the replay skips are
        named: kept as marked comments in a .heap, and in a dialog when a
        .rep left them out."""
        w = self.window
        name = os.path.basename(path)
        n = len(skipped)
        lines = f"{n} line{'s' if n > 1 else ''}"
        if not skipped:
            w.statusBar().showMessage(f"Saved {path}", 5000)
        elif readable:
            w.statusBar().showMessage(f"Saved {path}; the {lines} the replay skips kept as '#! ' "
                                      "comments (reopened, they are underlined again)", 8000)
        else:
            w.statusBar().showMessage(f"Saved {path} without the {lines} the replay skips", 8000)
            listed = "\n".join(f"line {line}: {text.strip()}  ({why})" for line, text, why in skipped[:20])
            more = f"\n… and {n - 20} more" if n > 20 else ""
            box = self.save_note = QMessageBox(
                QMessageBox.Information, "Lines left out",
                f"{name} holds the operations the replay makes; the {lines} it skips "
                f"{'are' if n > 1 else 'is'} not in it. Save as .heap to keep them.", QMessageBox.Ok, w)
            box.setDetailedText(listed + more)
            box.setInformativeText(listed.split("\n")[0] + (" …" if n > 1 else ""))
            box.setAttribute(Qt.WA_DeleteOnClose)
            box.finished.connect(lambda _=0, b=box: self._note_closed(b))
            box.open()

    def _note_closed(self, box) -> None:
        if self.save_note is box:
            self.save_note = None

    # ============================================================== closing
    def close_allowed(self) -> bool:
        """Whether the window may close now: with unsaved changes, ask first
        (the answer closes it again)."""
        if not self.dirty or self._close_answered:
            return True
        self.ask_unsaved(self.window.close, "close")
        return False

    def ask_unsaved(self, then, doing: str) -> None:
        """Save / Discard / Cancel the unsaved changes, then ``then()``."""
        w = self.window
        box = self.close_box = QMessageBox(QMessageBox.Warning, "Unsaved changes",
                                           f"The trace {self.model.label} has changes that are not "
                                           f"saved. Save them before you {doing}?",
                                           QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel, w)
        box.setDefaultButton(QMessageBox.Save)
        box.setAttribute(Qt.WA_DeleteOnClose)

        def answered(button) -> None:
            role = box.standardButton(button)
            if role == QMessageBox.Save and not self.save():
                return
            if role in (QMessageBox.Save, QMessageBox.Discard):
                self._close_answered = doing == "close"
                if role == QMessageBox.Discard:
                    self.sandbox = None
                then()
        box.buttonClicked.connect(answered)
        box.finished.connect(lambda _=0: setattr(self, "close_box", None))
        box.open()

    # ============================================================ the view
    def refresh(self) -> None:
        """The actions' state and texts, and the title's unsaved mark."""
        box = self.sandbox if self.sandbox is not None and self.sandbox.trace is self.model.trace else None
        has = self.model.trace is not None
        self.act_undo.setEnabled(box is not None and box.can_undo)
        self.act_redo.setEnabled(box is not None and box.can_redo)
        self.act_undo.setText("&Undo " + box.undo_text() if box and box.can_undo else "&Undo")
        self.act_redo.setText("&Redo " + box.redo_text() if box and box.can_redo else "&Redo")
        for act in (self.act_save, self.act_save_as, self.act_free, self.act_realloc):
            act.setEnabled(has)
        self.window.setWindowModified(self.dirty)

    def window_title(self) -> None:
        """The title after a save renamed the trace."""
        w = self.window
        title = w.windowTitle().split(" — ")
        if len(title) >= 3:
            title[1] = self.model.label + "[*]"
            w.setWindowTitle(" — ".join(title))

    # ===================================================== right-click menus
    def _hook_map(self, heap_map, row) -> None:
        if id(heap_map) in self._hooked:
            return
        self._hooked.add(id(heap_map))
        heap_map.plot_widget.scene().sigMouseClicked.connect(
            lambda event, m=heap_map, r=row: self._map_clicked(event, m, r()))

    def _hook_structure(self, panel) -> None:
        """A right click on a block of ``panel``'s structure view opens the
        block's menu, as on the map (the panel says its row)."""
        if id(panel) in self._hooked:
            return
        self._hooked.add(id(panel))
        panel.block_menu_asked.connect(self._structure_menu_asked)

    def _structure_menu_asked(self, row: int, address: int, where) -> None:
        if self.model.trace is not None:
            self.open_block_menu(row, address, where)

    def _hook_compare_rows(self) -> None:
        for row in self.window.compare.view.rows:
            self._hook_map(row.map, lambda r=row: r.row)
            self._hook_structure(row.structure)

    def _map_clicked(self, event, heap_map, row: int) -> None:
        if event.button() != Qt.RightButton or self.model.trace is None:
            return
        event.accept()
        address = heap_map.address_at(event.scenePos())
        self.open_block_menu(row, address, event.screenPos().toPoint())

    def open_block_menu(self, row: int, address: int, where) -> QMenu:
        """The menu of the block at ``address`` in row ``row``: free or
        realloc it when it is used, malloc after the step anyway."""
        name = self.name_at(row, address)
        menu = self.block_menu = QMenu(self.window)
        menu.setAttribute(Qt.WA_DeleteOnClose)
        if name is not None:
            menu.addAction(f"Free this block ({name})").triggered.connect(
                once_closed(self, lambda checked=False: self.free_block(name)))
            menu.addAction(f"Realloc this block ({name})…").triggered.connect(
                lambda checked=False: self.ask_realloc(name))
            menu.addSeparator()
        menu.addAction(f"Malloc… after step {self.model.position}").triggered.connect(
            lambda checked=False: self.ask_malloc())
        menu.aboutToHide.connect(lambda m=menu: self._menu_closed(m))
        menu.popup(where)
        return menu

    def _menu_closed(self, menu) -> None:
        if self.block_menu is menu:
            self.block_menu = None
        QTimer.singleShot(0, self.focus_back)     # after the item's edit


def once_closed(context: QObject, then):
    """``then`` as the slot of a dialog's answer or a menu item, run from the
    event loop once that dialog or menu has finished closing (unless
    ``context`` is deleted first).

    Its edit may replay a long trace, and the replay's progress dialog
    processes events inside its setValue() (window-modal, for its Cancel).
    Run inside the signal, that nested event processing carried out the
    deferred delete of the very dialog or menu still emitting it (closed
    with WA_DeleteOnClose: QWindow::close() sends the close event, in which
    deleteLater() is called, one event level deeper than the key or click
    being handled, so Qt counts it due in the nested processing):
    QInputDialog::done() and the QMenu's click went on in freed memory when
    the replay returned, Cancel clicked or not (every run; a segfault inside
    a test's keyClick in 4 runs of 30 here).  Queued, the replay runs with
    no closing widget under it."""
    return lambda *args: QTimer.singleShot(0, context, lambda: then(*args))


class ReplayProgress:
    """Progress of a long replay after an edit, in ``dialog`` (the window's
    one, kept: a progress dialog deleted while its own setValue() ran crashed
    the window once, DESIGN.md), shown only once the replay reports progress
    (every 4096 steps: never for a small trace); its Cancel stops the replay.
    The dialog is window-modal: setValue() lets its Cancel be clicked, and
    the replay is never started from a widget's own signal (:func:`once_closed`)
    nor while another runs (``SandboxEdits._replaying``).  Once cancelled,
    it stays so (QProgressDialog.reset() forgets it) and setValue() is not
    called again (on the reset dialog it would show it anew)."""

    def __init__(self, dialog_for, rows: int) -> None:
        self.dialog_for = dialog_for
        self.rows = rows
        self.dialog: QProgressDialog | None = None
        self._row = 0
        self._last = 0
        self._cancelled = False

    def report(self, done: int, total: int) -> None:
        if self.cancelled():
            return                      # the replay stops at its next look at cancel()
        if done < self._last:           # the next row's build began
            self._row += 1
        self._last = done
        if self.dialog is None and done >= total:
            return                      # a build's last report: nothing was long
        if self.dialog is None:
            self.dialog = self.dialog_for()
            self.dialog.show()
        share = (self._row + (done / total if total else 1)) / max(1, self.rows)
        self.dialog.setValue(min(999, int(1000 * share)))

    def cancelled(self) -> bool:
        self._cancelled = self._cancelled or (self.dialog is not None and self.dialog.wasCanceled())
        return self._cancelled

    def close(self) -> bool:
        """Hide the dialog; whether it had shown."""
        if self.dialog is not None:
            self.dialog.reset()
            self.dialog.hide()
        return self.dialog is not None


def readable_of(source: str | None) -> tuple[dict | None, list | None]:
    """({id: name} of a readable trace file's blocks, as its reader numbered
    them; its lines, those it kept as skipped unmarked), or (None, None) for
    another file, or one that cannot be read now."""
    if not source or not os.path.isfile(source):
        return None, None
    try:
        opener = gzip.open if source.lower().endswith(".gz") else open
        with opener(source, "rb") as f:
            data = f.read()
    except OSError:
        return None, None
    if not looks_readable(data):
        return None, None
    lines = unmark_skipped(data.decode("utf-8", "replace").replace("\r\n", "\n").split("\n"))
    while lines and not lines[-1].strip():
        lines.pop()             # the file's last newline is no line of its own
    return read_lines(lines).names, lines


def setting_bool(value) -> bool:
    """A QSettings value read back from the INI file (booleans come back as text)."""
    return value is True or str(value).lower() in ("true", "1", "yes")
