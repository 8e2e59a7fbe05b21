-- End-to-end test of the GradGuard language server in Neovim (0.7+), headless:
--   GRADGUARD_FILE=... GRADGUARD_OUT=... nvim --headless -u NONE -i NONE -n -c "luafile tests/e2e/nvim/test.lua"
-- (tests/e2e/nvim/run.sh sets the environment). Starts `python -m gradguard lsp` with
-- vim.lsp.start_client, opens a seed-like program and checks the diagnostic (GG101 on the raising
-- line), the hover on the backward call, and a quick fix (applied; the buffer is written to
-- GRADGUARD_OUT so that the caller can run it under torch). Exits non-zero on any failure.
local python = os.getenv('GRADGUARD_PYTHON') or 'python3'
local file = assert(os.getenv('GRADGUARD_FILE'), 'GRADGUARD_FILE is not set')
local out = os.getenv('GRADGUARD_OUT')
local passed, failed = 0, 0

local function say(msg)
  io.stdout:write('[nvim-e2e] ' .. msg .. '\n')
end

local function finish()
  say(string.format('%d passed, %d failed', passed, failed))
  vim.cmd(failed == 0 and passed > 0 and 'qall!' or 'cquit! 1')
end

local function check(name, ok, detail)
  if ok then passed = passed + 1 else failed = failed + 1 end
  say((ok and 'PASS ' or 'FAIL ') .. name .. (detail and (' — ' .. detail) or ''))
  if not ok then
    finish()
    error('stop')
  end
end

local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  vim.bo.filetype = 'python'
  local bufnr = vim.api.nvim_get_current_buf()
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local raise_line -- 0-based, the `l.backward()` inside the loop
  for i, l in ipairs(lines) do
    if l:match('^%s+l%.backward%(%)%s*$') then raise_line = i - 1 end
  end
  assert(raise_line, 'no `l.backward()` line in ' .. file)

  -- What a user puts in init.lua (see docs/editors.md), with the settings spelled out.
  local client_id = vim.lsp.start_client({
    name = 'gradguard',
    cmd = { python, '-m', 'gradguard', 'lsp' },
    root_dir = vim.fn.fnamemodify(file, ':p:h'),
    init_options = { settings = { gradguard = { enable = true, run = 'onType' } } },
    settings = { gradguard = { enable = true, run = 'onType', select = {}, ignore = {}, severity = vim.empty_dict() } },
    on_exit = function(code)
      if code ~= 0 then say('server exited with ' .. code) end
    end,
  })
  check('vim.lsp.start_client', client_id ~= nil)
  vim.lsp.buf_attach_client(bufnr, client_id)

  -- 1. The diagnostic on the raising line.
  vim.wait(30000, function() return #vim.diagnostic.get(bufnr) > 0 end, 100)
  local diags = vim.diagnostic.get(bufnr)
  local d = diags[1]
  local code = d and (d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code))
  check('one diagnostic, GG101 on the raising line',
    #diags == 1 and d.lnum == raise_line and code == 'GG101' and d.severity == vim.diagnostic.severity.ERROR
      and d.message:find('Trying to backward through the graph a second time', 1, true) ~= nil,
    d and string.format('%d diagnostic(s); line %d %s: %s', #diags, d.lnum + 1, tostring(code), d.message) or 'none')

  local uri = vim.uri_from_bufnr(bufnr)
  local col = lines[raise_line + 1]:find('backward', 1, true) -- 1-based start, so 0-based +1: inside the name
  local position = { line = raise_line, character = col }

  -- 2. The hover on the backward call.
  local hover = vim.lsp.buf_request_sync(bufnr, 'textDocument/hover',
    { textDocument = { uri = uri }, position = position }, 10000)
  local text = ''
  for _, res in pairs(hover or {}) do
    local c = res.result and res.result.contents
    if type(c) == 'table' then text = text .. (c.value or '') elseif type(c) == 'string' then text = text .. c end
  end
  check('hover on l.backward() names the graph it frees',
    text:find('Frees the saved tensors', 1, true) ~= nil and text:find('Y = torch.mm(X, true_W) + true_b', 1, true) ~= nil,
    (text:gsub('%s+', ' ')):sub(1, 160))

  -- 3. A quick fix: compute the target under torch.no_grad().
  local context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(bufnr, raise_line), only = { 'quickfix' } }
  local actions = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction',
    { textDocument = { uri = uri }, range = { start = position, ['end'] = position }, context = context }, 10000)
  local chosen, titles = nil, {}
  for _, res in pairs(actions or {}) do
    for _, action in ipairs(res.result or {}) do
      table.insert(titles, action.title)
      if not chosen and action.title:find('no_grad', 1, true) then chosen = action end
    end
  end
  check('code actions offer torch.no_grad()', chosen ~= nil, table.concat(titles, ' | '))
  local client = vim.lsp.get_client_by_id(client_id)
  if not chosen.edit then
    local resolved = vim.lsp.buf_request_sync(bufnr, 'codeAction/resolve', chosen, 10000)
    for _, res in pairs(resolved or {}) do
      if res.result and res.result.edit then chosen = res.result end
    end
  end
  check('the quick fix carries an edit', chosen.edit ~= nil)
  vim.lsp.util.apply_workspace_edit(chosen.edit, client.offset_encoding or 'utf-16')
  local fixed = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n')
  check('the buffer has the target built under torch.no_grad()',
    fixed:find('with torch.no_grad():\n    Y = torch.mm(X, true_W) + true_b', 1, true) ~= nil)
  vim.wait(15000, function() return #vim.diagnostic.get(bufnr) == 0 end, 100)
  check('the diagnostic is gone after the fix', #vim.diagnostic.get(bufnr) == 0)
  if out then
    vim.cmd('silent write! ' .. vim.fn.fnameescape(out))
  end

  vim.lsp.stop_client(client_id)
  vim.wait(3000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 100)
  finish()
end)
if not ok and tostring(err):find('stop') == nil then
  failed = failed + 1
  say('ERROR ' .. tostring(err))
  finish()
end
