# Source: https://github.com/tkalayci71/embedding-inspector/issues/22
"""embedding-inspector (a stable-diffusion-webui extension), v2.57: do_inspect() looks a token up
in the text encoder's token-embedding weight (emb_vec = internal_embs[emb_id].unsqueeze(0)),
lists the most similar embeddings, and with ENABLE_GRAPH draws every vector with
`plt.plot(x.numpy(), emb_vec[u].numpy())`. With a checkpoint whose embedding weight requires grad,
emb_vec carries a grad_fn (the .to(...).clone() before the plot keeps it) and numpy() raises. The
webui's model, tokenizer and matplotlib are replaced by small stand-ins: a byte-level tokenizer, an
nn.Embedding, and a figure that records the arrays it is given."""
import torch

MAX_SIMILAR_EMBS = 3  # number of similar embeddings to show
SEP_STR = '-'*80  # separator string
ENABLE_GRAPH = True


class Tokenizer:
    def __init__(self, vocab):
        self.encoder = {w: i for i, w in enumerate(vocab)}
        self.decoder = {i: w for i, w in enumerate(vocab)}

    def __call__(self, text, truncation=False, add_special_tokens=False):
        return {"input_ids": [self.encoder[w] for w in text.split() if w in self.encoder]}


class FrozenCLIPEmbedder(torch.nn.Module):
    def __init__(self, vocab, dim=8):
        super().__init__()
        self.tokenizer = Tokenizer(vocab)
        self.token_embedding = torch.nn.Embedding(len(vocab), dim)


class Figure:
    def __init__(self):
        self.lines = []

    def plot(self, x, y):
        self.lines.append((x, y))


embedder = FrozenCLIPEmbedder(['a', 'photo', 'of', 'cat', 'dog', 'house', 'tree', 'sky'])


def get_data():
    tokenizer = embedder.tokenizer
    internal_embs = embedder.token_embedding.weight
    loaded_embs = {}
    return tokenizer, internal_embs, loaded_embs  # return these useful references


def text_to_emb_ids(text, tokenizer):
    return tokenizer(text.lower(), truncation=False, add_special_tokens=False)["input_ids"]


def emb_id_to_name(emb_id, tokenizer):
    return tokenizer.decoder.get(emb_id, '!Unknown ID!')


def get_embedding_info(text):
    text = text.lower()
    tokenizer, internal_embs, loaded_embs = get_data()
    emb_ids = text_to_emb_ids(text, tokenizer)
    if len(emb_ids) == 0: return None, None, None, None
    emb_id = emb_ids[0]  # emb_id is int for internal embeddings
    emb_name = emb_id_to_name(emb_id, tokenizer)
    emb_vec = internal_embs[emb_id].unsqueeze(0)
    return emb_name, emb_id, emb_vec, None  # return embedding name, ID, vector


def do_inspect(text):
    text = text.strip().lower()
    if (text == ''): return 'Need embedding name or embedding ID as #nnnnn', None

    emb_name, emb_id, emb_vec, loaded_emb = get_embedding_info(text)
    if (emb_name is None) or (emb_id is None) or (emb_vec is None):
        return 'An error occurred', None

    results = []
    results.append('Embedding name: "'+emb_name+'"')
    results.append('Embedding ID: '+str(emb_id)+' (internal)')

    vec_count = emb_vec.shape[0]
    vec_size = emb_vec.shape[1]
    results.append('Vector count: '+str(vec_count))
    results.append('Vector size: '+str(vec_size))
    results.append(SEP_STR)

    tokenizer, internal_embs, loaded_embs = get_data()
    all_embs = internal_embs.to(device='cpu', dtype=torch.float32)

    for v in range(vec_count):
        vec_v = emb_vec[v].to(device='cpu', dtype=torch.float32)
        results.append('Vector['+str(v)+'] = '+str(vec_v))
        results.append('Magnitude: '+str(torch.linalg.norm(vec_v).item()))
        results.append('Min, Max: '+str(torch.min(vec_v).item())+', '+str(torch.max(vec_v).item()))

        results.append('')
        results.append("Similar embeddings:")
        cos = torch.nn.CosineSimilarity(dim=1, eps=1e-6)
        scores = cos(all_embs, vec_v)
        sorted_scores, sorted_ids = torch.sort(scores, descending=True)
        best_ids = sorted_ids[0:MAX_SIMILAR_EMBS].numpy()
        r = []
        for i in range(0, MAX_SIMILAR_EMBS):
            emb_id = best_ids[i].item()
            emb_name = emb_id_to_name(emb_id, tokenizer)
            r.append(emb_name+'('+str(emb_id)+')')
        results.append('   '.join(r))
        results.append(SEP_STR)

    saved_graph = None

    if ENABLE_GRAPH:
        emb_vec = emb_vec.to(device='cpu', dtype=torch.float32).clone()

        plt = Figure()
        for u in range(emb_vec.shape[0]):
            x = torch.arange(start=0, end=emb_vec[u].shape[0], step=1)
            plt.plot(x.numpy(), emb_vec[u].numpy())  # expect: GG107

        saved_graph = plt.lines

    return '\n'.join(results), saved_graph  # return info string to results textbox and graph


info, graph = do_inspect('cat')
print(info)
print(len(graph), 'line(s) drawn')
