# Source: https://github.com/GBLin5566/toward-controlled-generation-of-text-pytorch/issues/8
"""train_vae_with_attr_loss() fixed: the decoding state is reset at the start of every batch
(`next_word = None`, tested with `is not None` instead of `'next_word' in locals()`), so a
batch never decodes from the previous batch's freed graph; and the attribute losses the loop
computes are part of the one backward, `(total_vae_loss + extra_decoder_loss).backward()` (the
combined objective the maintainer's issue #7 is about), so the generated sentence's graph is
walked instead of growing unused."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Adam

PAD, BOS = 0, 2
max_features = 30
maxlen = 6
batch_size = 4
epoch = 1
c_dim = 2
d_word_vec = 8
d_inner_hid = 10
lambda_c = 0.1
lambda_z = 0.1


class Encoder(nn.Module):
    '''A LSTM encoder to encode a sentence into a latent vector z.'''
    def __init__(self, n_src_vocab, n_layers=1, d_word_vec=150, d_inner_hid=300, dropout=0.1,
                 d_out_hid=300):
        super(Encoder, self).__init__()
        self.drop = nn.Dropout(dropout)
        self.src_word_emb = nn.Embedding(n_src_vocab, d_word_vec, padding_idx=PAD)
        self.n_layers = n_layers
        self.d_inner_hid = d_inner_hid
        self.rnn = nn.LSTM(d_word_vec, d_inner_hid, n_layers)
        self._enc_mu = nn.Linear(d_inner_hid, d_out_hid)
        self._enc_log_sigma = nn.Linear(d_inner_hid, d_out_hid)

    def _sample_latent(self, enc_hidden):
        mu = self._enc_mu(enc_hidden)
        log_sigma = self._enc_log_sigma(enc_hidden)
        sigma = torch.exp(log_sigma)
        std_z = torch.from_numpy(np.random.normal(0, 1, size=sigma.size())).float()
        self.z_mean = mu
        self.z_sigma = sigma
        return mu + sigma * std_z

    def forward(self, src_seq, hidden, dont_pass_emb=False):
        if dont_pass_emb:
            enc_input = self.drop(src_seq)
        else:
            enc_input = self.drop(self.src_word_emb(src_seq))
        enc_input = enc_input.permute(1, 0, 2)
        _, hidden = self.rnn(enc_input, hidden)
        hidden = (self._sample_latent(hidden[0]), hidden[1])
        return hidden

    def init_hidden(self, batch_size):
        return [torch.zeros(self.n_layers, batch_size, self.d_inner_hid),
                torch.zeros(self.n_layers, batch_size, self.d_inner_hid)]


class Generator(nn.Module):
    '''A LSTM generator to synthesis a sentence with input (z, c).'''
    def __init__(self, n_target_vocab, n_layers=1, d_word_vec=150, d_inner_hid=300, c_dim=1,
                 dropout=0.1):
        super(Generator, self).__init__()
        self.drop = nn.Dropout(dropout)
        self.d_inner_hid = d_inner_hid
        self.n_layers = n_layers
        self.target_word_emb = nn.Embedding(n_target_vocab, d_word_vec, padding_idx=PAD)
        self.rnn = nn.LSTM(d_word_vec, d_inner_hid + c_dim, n_layers)
        self.to_word_emb = nn.Sequential(nn.Linear(d_inner_hid + c_dim, d_word_vec), nn.ReLU())
        self.linear = nn.Linear(d_word_vec, n_target_vocab)
        self.one_hot_to_word_emb = nn.Linear(n_target_vocab, d_word_vec)
        self.linear.weight = self.target_word_emb.weight
        self.one_hot_to_word_emb.weight = torch.nn.Parameter(self.linear.weight.permute(1, 0).data)
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, target_word, hidden, low_temp=False, one_hot_input=False):
        if one_hot_input:
            dec_input = self.drop(self.one_hot_to_word_emb(target_word)).unsqueeze(0)
        else:
            dec_input = self.drop(self.target_word_emb(target_word)).unsqueeze(0)
        output, hidden = self.rnn(dec_input, hidden)
        output = self.to_word_emb(output)
        output = self.linear(output)
        if low_temp:
            pre_soft = output[0]
            lowed_output = pre_soft / 0.001
            output = self.softmax(lowed_output)
            return output, hidden, pre_soft
        return output, hidden

    def init_hidden_c_for_lstm(self, batch_size):
        return torch.zeros(self.n_layers, batch_size, self.d_inner_hid)


class Discriminator(nn.Module):
    '''A CNN discriminator to classify the attributes given a sentence.'''
    def __init__(self, n_src_vocab, maxlen, d_word_vec=150, dropout=0.1):
        super(Discriminator, self).__init__()
        self.src_word_emb = nn.Embedding(n_src_vocab, d_word_vec, padding_idx=PAD)
        self.drop = nn.Dropout(dropout)
        self.conv1 = nn.Conv1d(maxlen, 8, kernel_size=5)
        self.linear = nn.Linear(8 * ((n_src_vocab - 4) // 3), 2)

    def forward(self, input_sentence, dont_pass_emb=False):
        if dont_pass_emb:
            emb_sentence = input_sentence
        else:
            emb_sentence = self.src_word_emb(input_sentence)
        layer1 = F.max_pool1d(F.relu(self.conv1(emb_sentence)), 3)
        flatten = self.drop(layer1.view(layer1.size()[0], -1))
        return self.linear(flatten)


def latent_loss(z_mean, z_stddev):
    mean_sq = z_mean * z_mean
    stddev_sq = z_stddev * z_stddev
    return 0.5 * torch.mean(mean_sq + stddev_sq - torch.log(stddev_sq) - 1)


def get_batch_label(data, label, index, batch_size):
    input_data = torch.from_numpy(data[index:index+batch_size]).type(torch.LongTensor)
    output_data = torch.from_numpy(label[index:index+batch_size]).type(torch.LongTensor)
    return input_data, output_data


rng = np.random.RandomState(0)
x_train = rng.randint(4, max_features, size=(12, maxlen))
y_train = rng.randint(0, 2, size=12)
encoder = Encoder(n_src_vocab=max_features, d_word_vec=d_word_vec, d_inner_hid=d_inner_hid,
                  d_out_hid=d_inner_hid)
decoder = Generator(n_target_vocab=max_features, d_word_vec=d_word_vec, d_inner_hid=d_inner_hid,
                    c_dim=c_dim)
discriminator = Discriminator(n_src_vocab=max_features, maxlen=maxlen, d_word_vec=d_word_vec)
criterion = torch.nn.CrossEntropyLoss()
vae_parameters = list(encoder.parameters()) + list(decoder.parameters())
vae_opt = Adam(vae_parameters)
e_opt = Adam(encoder.parameters())
g_opt = Adam(decoder.parameters())


def train_vae_with_attr_loss(encoder, decoder, discriminator):
    for epoch_index in range(epoch):
        for batch, index in enumerate(range(0, len(x_train) - 1, batch_size)):
            encoder.zero_grad()
            decoder.zero_grad()
            e_opt.zero_grad()
            g_opt.zero_grad()
            vae_loss = 0
            ll = 0
            next_word = None

            input_data, output_data = get_batch_label(x_train, y_train, index, batch_size)

            enc_hidden = encoder.init_hidden(len(input_data))
            enc_hidden = encoder(input_data, enc_hidden)

            target = np.array([output_data.cpu().data.numpy()]).reshape(-1)
            one_hot_array = np.eye(c_dim)[target]
            var_c = torch.from_numpy(one_hot_array).float()
            cat_hidden = (torch.cat([enc_hidden[0][0], var_c], dim=1).unsqueeze(0),
                    torch.cat([decoder.init_hidden_c_for_lstm(len(input_data))[0], var_c], dim=1).unsqueeze(0))

            batch_init_word = np.zeros((batch_size, max_features))
            batch_init_word[np.arange(batch_size), BOS] = 1
            batch_init_word = torch.from_numpy(batch_init_word).float()

            input_data = input_data.permute(1, 0)
            for index in range(maxlen - 1):
                if next_word is not None:
                    word = next_word.squeeze(1)
                    output, cat_hidden, pre_soft = decoder(
                            word, cat_hidden, low_temp=True, one_hot_input=True)
                else:
                    word = batch_init_word
                    output, cat_hidden, pre_soft = decoder(
                            word, cat_hidden, low_temp=True, one_hot_input=True)
                next_word = output
                correct_word = input_data[index+1]
                vae_loss += criterion(pre_soft.view(-1, max_features), correct_word)
                if len(batch_init_word.size()) == 2:
                    batch_init_word = batch_init_word.unsqueeze(1)
                if len(next_word.size()) == 2:
                    next_word = next_word.unsqueeze(1)
                batch_init_word = torch.cat([batch_init_word, next_word], dim=1)
            # NOTE Latent loss
            ll = latent_loss(encoder.z_mean, encoder.z_sigma)
            # NOTE L_attr_c loss
            generated_sentence = batch_init_word
            discriminator.eval()
            logit = discriminator(generated_sentence, dont_pass_emb=True)
            l_attr_c = criterion(logit, output_data)
            # NOTE L_attr_z loss
            encoder.eval()
            generated_sentence = decoder.one_hot_to_word_emb(generated_sentence)
            encoded_gen = encoder.init_hidden(len(generated_sentence))
            encoded_gen = encoder(generated_sentence, encoded_gen, dont_pass_emb=True)
            l_attr_z = latent_loss(encoder.z_mean, encoder.z_sigma)

            avg_loss = vae_loss.item() / maxlen

            total_vae_loss = vae_loss + ll
            extra_decoder_loss = lambda_c * l_attr_c + lambda_z * l_attr_z
            (total_vae_loss + extra_decoder_loss).backward()
            vae_opt.step()

            print("[Attr] Epoch {} batch {}'s average language loss: {}, latent loss: {}".format(
                epoch_index, batch, avg_loss, ll.item()))
            print("l_attr_c loss: {}, l_attr_z loss: {}".format(l_attr_c.item(), l_attr_z.item()))


train_vae_with_attr_loss(encoder, decoder, discriminator)
