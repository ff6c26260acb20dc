"""The authoring toolkit: helpers every plugin author needs, written once.

Import the module for the job, not this package:

- `nenyax.core.toolkit.options`: URI options declared once (key, type, bounds, default, help), read
  from a parsed `EnvURI` with one-sentence `BadURIError`s and did-you-mean for an unknown key;
- `nenyax.core.toolkit.suggest`: the did-you-mean sentence for any unknown name;
- `nenyax.core.toolkit.loops`: running a coroutine from synchronous code (also inside a running loop,
  as in Jupyter), and a private loop on a thread for a session whose connection must stay on one loop;
- `nenyax.core.toolkit.codec`: reading an action a chat model wrote inside ``<action></action>``;
- `nenyax.core.toolkit.qa`: the question/answer environment's defaults;
- `nenyax.core.toolkit.sandbox`: copying files in and out through tar, finding what a command started,
  and this process's control groups;
- `nenyax.core.toolkit.dealer`: what an executor hands over when a worker is lost with an episode;
- `nenyax.core.toolkit.episodes`: playing one episode where a backend's worker runs;
- `nenyax.core.toolkit.failures`: one line saying why an episode failed, and the errors that stop a run;
- `nenyax.core.toolkit.arrays`: numpy arrays in records;
- `nenyax.core.toolkit.files`: an export file or folder written atomically;
- `nenyax.core.toolkit.learning`: group advantages for a learner;
- `nenyax.core.toolkit.plugins`: building another plugin by kind and name;
- `nenyax.core.toolkit.cache`: where a plugin caches on this machine;
- `nenyax.core.toolkit.imports`: a package not installed, told from one installed but broken.

With the lazy root `nenyax.core`, `nenyax.core.hookspecs`, `nenyax.core.errors` and the kit `nenyax.testing`,
this is the whole surface a plugin imports: the root `pyproject.toml`'s import contract refuses any other
core module in a plugin distribution.
"""
