// GradGuard's quick fixes in JupyterLab notebooks.
//
// jupyterlab-lsp (5.3) shows GradGuard's squiggles and hovers but sends no textDocument/codeAction.
// This plugin does, through JupyterLab's own LSP layer: the selection of the active cell is mapped
// into the notebook's virtual document (the code cells joined), the request goes over the
// connection jupyterlab-lsp already opened to GradGuard, and the returned WorkspaceEdit is mapped
// back onto the cells with the virtual document's own position maps.
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, InputDialog, Notification } from '@jupyterlab/apputils';
import {
  IEditorPosition,
  ILSPConnection,
  ILSPDocumentConnectionManager,
  ILSPFeatureManager,
  IVirtualPosition,
  IWidgetLSPAdapterTracker,
  VirtualDocument,
  WidgetLSPAdapter
} from '@jupyterlab/lsp';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type * as lsp from 'vscode-languageserver-protocol';

const PLUGIN_ID = 'gradguard-jupyterlab:quick-fix';
const COMMAND = 'gradguard:quick-fix';
const SERVER = 'gradguard'; // the key of GradGuard's jupyter-lsp spec

/** A text edit of one cell's source, in character offsets of that source. */
interface ICellEdit {
  cell: number;
  from: number;
  to: number;
  text: string;
}

/** Why no fix was applied, said to the user. */
class NoFix extends Error {}

/** The notebook's virtual document holding the active cell's selection, and that selection in it. */
function selectionInVirtual(
  adapter: WidgetLSPAdapter<NotebookPanel>
): { doc: VirtualDocument; range: lsp.Range } {
  const cell = adapter.widget.content.activeCell;
  const root = adapter.virtualDocument;
  const editor = adapter.activeEditor;
  if (!cell || cell.model.type !== 'code' || !cell.editor || !root || !editor) {
    throw new NoFix('put the cursor in a code cell');
  }
  const { start, end } = cell.editor.getSelection();
  const toVirtual = (p: { line: number; column: number }) => {
    const inRoot = root.transformFromEditorToRoot(editor, { line: p.line, ch: p.column } as IEditorPosition);
    if (!inRoot) throw new NoFix('this cell is not part of the document GradGuard analyses');
    const doc = root.documentAtSourcePosition(inRoot);
    return { doc, pos: doc.virtualPositionAtDocument(inRoot) };
  };
  const from = toVirtual(start);
  const to = toVirtual(end);
  if (from.doc !== to.doc) throw new NoFix('select code of one language');
  const position = (p: IVirtualPosition): lsp.Position => ({ line: p.line, character: p.ch });
  return { doc: from.doc, range: { start: position(from.pos), end: position(to.pos) } };
}

/** The connection to GradGuard of `doc`, if GradGuard serves it. */
function gradguardConnection(manager: ILSPDocumentConnectionManager, doc: VirtualDocument): ILSPConnection {
  const connection = manager.connections.get(doc.uri);
  if (!connection || connection.serverIdentifier !== SERVER) {
    const other = connection?.serverIdentifier;
    throw new NoFix(other ? `this notebook is served by ${other}, not GradGuard` : 'GradGuard is not connected yet');
  }
  return connection;
}

/** The edits of `edit` for `doc`, as edits of the notebook's cells. */
function cellEdits(adapter: WidgetLSPAdapter<NotebookPanel>, doc: VirtualDocument, edit: lsp.WorkspaceEdit): ICellEdit[] {
  const uri = doc.documentInfo.uri;
  const textEdits: lsp.TextEdit[] = [];
  for (const [target, edits] of Object.entries(edit.changes ?? {})) {
    if (target !== uri) throw new NoFix(`the fix edits another document (${target})`);
    textEdits.push(...edits);
  }
  for (const change of edit.documentChanges ?? []) {
    if (!('textDocument' in change) || change.textDocument.uri !== uri) {
      throw new NoFix('the fix edits another document');
    }
    textEdits.push(...change.edits.filter((e): e is lsp.TextEdit => 'range' in e));
  }
  const blocks = adapter.editors; // one per cell of the notebook, in order
  const place = (p: lsp.Position) => {
    const at = { line: p.line, ch: p.character } as IVirtualPosition;
    const inCell = doc.transformVirtualToEditor(at);
    const cell = inCell ? blocks.findIndex(b => b.ceEditor === doc.getEditorAtVirtualLine(at)) : -1;
    if (!inCell || cell < 0) throw new NoFix(`the fix touches line ${p.line + 1}, which is in no cell`);
    const lines = blocks[cell].value.split('\n');
    if (inCell.line >= lines.length || inCell.ch > lines[inCell.line].length) {
      throw new NoFix('the fix does not fit the cell: try again');
    }
    const offset = lines.slice(0, inCell.line).reduce((n, l) => n + l.length + 1, 0) + inCell.ch;
    return { cell, offset };
  };
  return textEdits.map(e => {
    const start = place(e.range.start);
    const end = place(e.range.end);
    if (start.cell !== end.cell) throw new NoFix('the fix spans several cells');
    return { cell: start.cell, from: start.offset, to: end.offset, text: e.newText };
  });
}

/** Applies the edits to the cells' sources, last first so that earlier offsets hold; one
 * transaction per cell, so that the cell's undo (Ctrl+Z) takes its part of the fix back at once. */
function applyToCells(panel: NotebookPanel, edits: ICellEdit[]): void {
  const model = panel.content.model;
  if (!model) throw new NoFix('the notebook is not loaded');
  edits.sort((a, b) => b.cell - a.cell || b.from - a.from);
  for (const index of new Set(edits.map(e => e.cell))) {
    const cell = model.cells.get(index).sharedModel;
    cell.transact(() => {
      for (const e of edits) if (e.cell === index) cell.updateSource(e.from, e.to, e.text);
    });
  }
}

/** Asks GradGuard for the quick fixes at the cursor, lets the user pick one, applies it. */
async function quickFix(
  panel: NotebookPanel,
  manager: ILSPDocumentConnectionManager,
  adapters: IWidgetLSPAdapterTracker | null
): Promise<string | null> {
  // jupyterlab-lsp 5 registers its adapters with the connection manager only, JupyterLab's own
  // with the tracker too
  const isOurs = (a: WidgetLSPAdapter) => a.widget === panel;
  const adapter = (adapters?.find(isOurs) ?? [...manager.adapters.values()].find(isOurs)) as
    | WidgetLSPAdapter<NotebookPanel>
    | undefined;
  if (!adapter) throw new NoFix('no language server connection for this notebook');
  await adapter.updateFinished; // the server has the text the positions refer to
  const { doc, range } = selectionInVirtual(adapter);
  const connection = gradguardConnection(manager, doc);
  const version = doc.documentInfo.version;
  const answer = await connection.clientRequests['textDocument/codeAction'].request({
    textDocument: { uri: doc.documentInfo.uri },
    range,
    context: { diagnostics: [], only: ['quickfix'] }
  });
  const actions = (answer ?? []).filter((a): a is lsp.CodeAction => 'kind' in a && a.edit !== undefined);
  if (!actions.length) throw new NoFix('no finding with a fix here');
  const preferred = actions.find(a => a.isPreferred) ?? actions[0];
  const titles = actions.map(a => a.title);
  const chosen = await InputDialog.getItem({
    title: 'GradGuard: Quick fix',
    items: titles,
    current: titles.indexOf(preferred.title),
    okLabel: 'Apply'
  });
  if (!chosen.button.accept || chosen.value === null) return null;
  const action = actions[titles.indexOf(chosen.value)];
  // the edit is of the text the server had when asked: the notebook must not have changed since
  if (doc.documentInfo.version !== version) throw new NoFix('the notebook changed meanwhile: try again');
  applyToCells(panel, cellEdits(adapter, doc, action.edit!));
  return action.title;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: "GradGuard's quick fixes for notebook cells (textDocument/codeAction through JupyterLab's LSP layer)",
  autoStart: true,
  requires: [INotebookTracker, ILSPDocumentConnectionManager],
  optional: [IWidgetLSPAdapterTracker, ICommandPalette, ILSPFeatureManager],
  activate: (
    app: JupyterFrontEnd,
    notebooks: INotebookTracker,
    manager: ILSPDocumentConnectionManager,
    adapters: IWidgetLSPAdapterTracker | null,
    palette: ICommandPalette | null,
    features: ILSPFeatureManager | null
  ) => {
    // tells the servers this client takes code action literals (edits, no commands)
    features?.register({
      id: PLUGIN_ID,
      capabilities: {
        textDocument: {
          codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix'] } } }
        }
      }
    });
    app.commands.addCommand(COMMAND, {
      label: 'GradGuard: Quick fix',
      caption: "Apply one of GradGuard's fixes for the finding at the cursor",
      isEnabled: () => notebooks.activeCell?.model.type === 'code',
      execute: async () => {
        const panel = notebooks.currentWidget;
        if (!panel) return;
        try {
          const applied = await quickFix(panel, manager, adapters);
          if (applied) Notification.success(`GradGuard: ${applied}`, { autoClose: 3000 });
        } catch (err) {
          if (!(err instanceof NoFix)) throw err;
          Notification.info(`GradGuard: ${err.message}`, { autoClose: 4000 });
        }
      }
    });
    palette?.addItem({ command: COMMAND, category: 'GradGuard' });
    app.contextMenu.addItem({ command: COMMAND, selector: '.jp-Notebook .jp-CodeCell', rank: 0 });
    // Ctrl+. as in VS Code, in edit and command mode (the active cell keeps its cursor)
    app.commands.addKeyBinding({ command: COMMAND, keys: ['Accel .'], selector: '.jp-Notebook' });
  }
};

export default plugin;
