import * as crypto from 'crypto';
import * as vscode from 'vscode';
import { LanguageClient, State } from 'vscode-languageclient/node';
import { GRAPH_REQUEST } from './constants';
import { logWarn } from './log';

/** What the server answers to gradguard/graph (see server/gradguard/lsp/server.py `graph`). */
interface GraphAnswer {
    code: string;
    message: string;
    uri: string;
    range: { start: { line: number; character: number } };
    picture: string;
}

/** Messages from the webview's script. */
interface Open {
    type: 'open';
    href: string;
    line: number;
    column: number;
}

const FOLLOW_DELAY_MS = 150;

/**
 * The graph picture beside the editor: one webview, that follows the finding under the cursor,
 * takes its colours from the theme, and opens a node's line when it is clicked. The picture is
 * the server's SVG (no script, no external resource); the page allows only its own style and
 * script, by nonce, and no network at all.
 */
export class GraphView implements vscode.Disposable {
    private panel: vscode.WebviewPanel | undefined;
    private shown: string | undefined; // the finding shown: uri, line, character, code
    private source: vscode.ViewColumn | undefined; // where the code is
    private timer: NodeJS.Timeout | undefined;
    private readonly subscriptions: vscode.Disposable[] = [];

    constructor(private readonly client: () => LanguageClient | undefined) {
        this.subscriptions.push(
            vscode.window.onDidChangeTextEditorSelection((e) => this.follow(e.textEditor)),
            vscode.window.onDidChangeActiveTextEditor((editor) => editor && this.follow(editor)),
        );
    }

    /** Opens (or reveals) the picture of the finding at ``position`` of ``uri``. */
    async show(uri: vscode.Uri, position: vscode.Position): Promise<boolean> {
        const answer = await this.request(uri, position);
        if (!answer) {
            void vscode.window.showInformationMessage('GradGuard: no finding on this line to show the graph of.');
            return false;
        }
        this.source = vscode.window.activeTextEditor?.viewColumn ?? vscode.ViewColumn.One;
        if (!this.panel) {
            this.panel = vscode.window.createWebviewPanel(
                'gradguard.graph',
                'GradGuard graph',
                { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
                { enableScripts: true, localResourceRoots: [], enableCommandUris: false, enableFindWidget: true },
            );
            this.panel.onDidDispose(() => {
                this.panel = undefined;
                this.shown = undefined;
            });
            this.panel.webview.onDidReceiveMessage((message: Open) => this.open(message));
        } else {
            this.panel.reveal(vscode.ViewColumn.Beside, true);
        }
        this.render(answer);
        return true;
    }

    private follow(editor: vscode.TextEditor): void {
        if (!this.panel || editor.document.languageId !== 'python') {
            return;
        }
        if (this.timer) {
            clearTimeout(this.timer);
        }
        const uri = editor.document.uri;
        const position = editor.selection.active;
        this.timer = setTimeout(() => {
            void this.request(uri, position).then((answer) => answer && this.render(answer));
        }, FOLLOW_DELAY_MS);
    }

    private async request(uri: vscode.Uri, position: vscode.Position): Promise<GraphAnswer | undefined> {
        const client = this.client();
        if (!client || client.state !== State.Running) {
            return undefined;
        }
        try {
            const answer = await client.sendRequest<GraphAnswer | null>(GRAPH_REQUEST, {
                textDocument: { uri: uri.toString() },
                position: { line: position.line, character: position.character },
                format: 'svg',
                style: false,
            });
            return answer ?? undefined;
        } catch (err) {
            logWarn(`${GRAPH_REQUEST} failed: ${err}`);
            return undefined;
        }
    }

    private render(answer: GraphAnswer): void {
        if (!this.panel) {
            return;
        }
        const key = `${answer.uri}:${answer.range.start.line}:${answer.range.start.character}:${answer.code}:${answer.picture.length}`;
        this.panel.title = `GradGuard graph: ${answer.code}, line ${answer.range.start.line + 1}`;
        if (key === this.shown) {
            return;
        }
        this.shown = key;
        this.panel.webview.html = page(answer, crypto.randomBytes(16).toString('base64'));
    }

    private async open(message: Open): Promise<void> {
        if (message?.type !== 'open' || typeof message.href !== 'string') {
            return;
        }
        const target = vscode.Uri.parse(message.href.split('#')[0]);
        const position = new vscode.Position(Math.max(0, message.line - 1), Math.max(0, message.column - 1));
        try {
            const document = await vscode.workspace.openTextDocument(target);
            await vscode.window.showTextDocument(document, {
                viewColumn: this.source ?? vscode.ViewColumn.One,
                selection: new vscode.Range(position, position),
            });
        } catch (err) {
            logWarn(`GradGuard graph: cannot open ${message.href}: ${err}`);
        }
    }

    dispose(): void {
        this.panel?.dispose();
        for (const s of this.subscriptions) {
            s.dispose();
        }
    }
}

/** The page: the picture, the theme's colours on its classes, a click handler. */
function page(answer: GraphAnswer, nonce: string): string {
    const csp = `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src 'none'; connect-src 'none'; font-src 'none'`;
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<style nonce="${nonce}">${THEME}</style>
</head>
<body>
<main id="graph" data-code="${escapeHtml(answer.code)}">${answer.picture}</main>
<script nonce="${nonce}">${SCRIPT}</script>
</body>
</html>`;
}

function escapeHtml(text: string): string {
    return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The picture's classes (server/gradguard/graph_render.py) in the theme's colours: light, dark
 * and high contrast alike, as VS Code sets these variables for each. */
const THEME = `
body{background:var(--vscode-editor-background);color:var(--vscode-editor-foreground);padding:8px}
svg.gg{font-family:var(--vscode-editor-font-family),monospace;font-size:12px;max-width:100%;height:auto}
.gg .bg{fill:var(--vscode-editor-background)}
.gg text{fill:var(--vscode-editor-foreground)}
.gg .muted{fill:var(--vscode-descriptionForeground)}
.gg .title{font-weight:bold}
.gg .node{fill:var(--vscode-editorWidget-background);stroke:var(--vscode-contrastBorder,var(--vscode-editorWidget-border));stroke-width:1}
.gg .origin .node{stroke:var(--vscode-testing-iconPassed,var(--vscode-charts-green));stroke-width:2}
.gg .freed .node,.gg .walk .node,.gg .modify .node{stroke:var(--vscode-editorError-foreground);stroke-width:2}
.gg .free .node{stroke:var(--vscode-editorWarning-foreground);stroke-width:2}
.gg .badge,.gg .arrow{fill:var(--vscode-editorWarning-foreground)}
.gg .line{fill:var(--vscode-textLink-foreground);text-decoration:underline}
.gg .edge{stroke:var(--vscode-descriptionForeground);fill:none}
.gg .frees{stroke:var(--vscode-editorWarning-foreground);fill:none;stroke-width:1.5}
.gg .walks{stroke:var(--vscode-editorError-foreground);fill:none;stroke-width:1.5;stroke-dasharray:5 3}
.gg .cut{stroke:var(--vscode-charts-purple);stroke-width:2;stroke-dasharray:6 3}
.gg .cuttext{fill:var(--vscode-charts-purple)}
.gg .lane{fill:var(--vscode-sideBar-background,var(--vscode-editor-background))}
.gg .err{fill:var(--vscode-editorError-foreground)}
.gg a{cursor:pointer}
.gg a:hover .node,.gg a:focus .node{stroke:var(--vscode-focusBorder);stroke-width:2}
`;

/** Clicks on a node (an <a> with its place in data-*) open that place in the editor. */
const SCRIPT = `
const vscode = acquireVsCodeApi();
document.addEventListener('click', (event) => {
  const link = event.target.closest && event.target.closest('a[data-line]');
  if (!link) { return; }
  event.preventDefault();
  vscode.postMessage({ type: 'open', href: link.getAttribute('href') || '',
    line: Number(link.dataset.line), column: Number(link.dataset.column) });
});
`;
