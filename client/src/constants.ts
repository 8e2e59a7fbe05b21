import * as path from 'path';

/** Identifiers shared by the manifest (package.json) and the code. */
export const SERVER_ID = 'gradguard';
export const SERVER_NAME = 'GradGuard';
export const CONFIG_SECTION = 'gradguard';
export const FIX_ALL_KIND = 'source.fixAll.gradguard';
/** The server's custom request for a finding's graph picture, and the command that shows it. */
export const GRAPH_REQUEST = 'gradguard/graph';
export const SHOW_GRAPH_COMMAND = 'gradguard.showGraph';

/** Oldest CPython the server supports (pyproject.toml `requires-python`). */
export const MIN_PYTHON: readonly [number, number] = [3, 10];

/** Where the packaged extension keeps the server and its libraries (see scripts/package_vsix.sh). */
export function bundledPaths(extensionRoot: string) {
    const bundled = path.join(extensionRoot, 'bundled');
    return {
        bundled,
        libs: path.join(bundled, 'libs'),
        tool: path.join(bundled, 'tool'),
        /** Libraries with compiled parts (libcst), one folder per CPython minor: libs-cp310, ... */
        versionedLibs: (major: number, minor: number) => path.join(bundled, `libs-cp${major}${minor}`),
    };
}
