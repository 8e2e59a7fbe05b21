# Source: https://github.com/ccsasuke/umwe/issues/5
"""UMWE's sentence translation evaluation with the maintainer's fix (commit 5d0beb8, "Fix a
PyTorch 0.4 incompatibility"): both embedding matrices are detached before the NumPy conversion
(`emb.cpu().detach().numpy()`). Same mapping steps, random embeddings and parallel sentences."""
import numpy as np
import torch
import torch.nn as nn


def bow_idf(sentences, word_vec, idf_dict=None):
    """Sentence embeddings: idf-weighted average of the word vectors."""
    embeddings = []
    for sent in sentences:
        words = [w for w in sent if w in word_vec]
        weights = [idf_dict[w] for w in words]
        embeddings.append(np.sum([word_vec[w] * c for w, c in zip(words, weights)], 0) / np.sum(weights))
    return np.vstack(embeddings)


def apply_mapping(mapping, input_emb):
    bs = 4096
    with torch.no_grad():
        output_emb = input_emb.clone()
        for i, k in enumerate(range(0, len(input_emb), bs)):
            x = input_emb[k:k + bs]
            output_emb[k:k + bs] = mapping(x.to(mapping.weight.device)).to(input_emb.device)
        return output_emb


def get_sent_translation_accuracy(data, lg1, word2id1, emb1, lg2, word2id2, emb2, n_keys, n_queries, method, idf):
    # get word vectors dictionaries
    emb1 = emb1.cpu().detach().numpy()
    emb2 = emb2.cpu().detach().numpy()
    word_vec1 = dict([(w, emb1[word2id1[w]]) for w in word2id1])
    word_vec2 = dict([(w, emb2[word2id2[w]]) for w in word2id2])
    word_vect = {lg1: word_vec1, lg2: word_vec2}
    lg_keys = lg2
    lg_query = lg1

    # get n_keys pairs of sentences
    keys = data[lg_keys][:n_keys]
    keys = bow_idf(keys, word_vect[lg_keys], idf_dict=idf[lg_keys])

    # get n_queries query pairs from these n_keys pairs
    rng = np.random.RandomState(1234)
    idx_query = rng.choice(range(n_keys), size=n_queries, replace=False)
    queries = data[lg_query][idx_query]
    queries = bow_idf(queries, word_vect[lg_query], idf_dict=idf[lg_query])

    # normalize embeddings
    queries = torch.from_numpy(queries).float()
    queries = queries / queries.norm(2, 1, keepdim=True).expand_as(queries)
    keys = torch.from_numpy(keys).float()
    keys = keys / keys.norm(2, 1, keepdim=True).expand_as(keys)

    # nearest neighbors
    scores = keys.mm(queries.transpose(0, 1)).transpose(0, 1)
    top_k_matches = scores.topk(10, 1, True)[1]
    results = []
    for k in [1, 5, 10]:
        top_k = (top_k_matches[:, :k] == torch.from_numpy(idx_query)[:, None]).sum(1)
        results.append(('sent-precision_at_%i' % k, 100 * top_k.float().mean().item()))
    return results


class Evaluator(object):
    def __init__(self, mappings, embs, vocabs, europarl_data, idf, src_langs, tgt_lang):
        self.mappings, self.embs, self.vocabs = mappings, embs, vocabs
        self.europarl_data, self.idf = europarl_data, idf
        self.src_langs, self.tgt_lang = src_langs, tgt_lang

    def sent_translation(self, to_log, n_keys=40, n_queries=10):
        tgt_lang = self.tgt_lang
        for src_lang in self.src_langs:
            lang_pair = (src_lang, tgt_lang)
            # mapped word embeddings
            src_emb = apply_mapping(self.mappings[src_lang], self.embs[src_lang].weight)
            tgt_emb = self.embs[tgt_lang].weight
            idf = self.idf[lang_pair]
            for method in ['nn']:
                # source <- target sentence translation
                results = get_sent_translation_accuracy(
                    self.europarl_data[lang_pair],
                    src_lang, self.vocabs[src_lang], src_emb,
                    tgt_lang, self.vocabs[tgt_lang], tgt_emb,
                    n_keys=n_keys, n_queries=n_queries, method=method, idf=idf)
                to_log.update([('%s_to_%s_%s-%s' % (tgt_lang, src_lang, k, method), v) for k, v in results])


dim, n_words = 8, 30
langs = ['de', 'en']
vocabs = {lg: {'%s%d' % (lg, i): i for i in range(n_words)} for lg in langs}
embs = {lg: nn.Embedding(n_words, dim) for lg in langs}
mappings = {'de': nn.Linear(dim, dim, bias=False)}

# fit the mapping on a seed dictionary (word i <-> word i)
optimizer = torch.optim.SGD(mappings['de'].parameters(), lr=0.1)
for step in range(3):
    loss = ((mappings['de'](embs['de'].weight.detach()) - embs['en'].weight.detach()) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

rng = np.random.RandomState(0)
sentences = rng.randint(0, n_words, size=(40, 6))
europarl = {('de', 'en'): {lg: np.array([['%s%d' % (lg, i) for i in s] for s in sentences]) for lg in langs}}
idf = {('de', 'en'): {lg: {w: 1.0 + rng.rand() for w in vocabs[lg]} for lg in langs}}

to_log = {}
Evaluator(mappings, embs, vocabs, europarl, idf, ['de'], 'en').sent_translation(to_log)
print(to_log)
