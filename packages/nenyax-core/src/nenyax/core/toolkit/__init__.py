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
- `nenyax.core.toolkit.dealer`: what an executor hands over when a worker is lost with an episode.
"""
