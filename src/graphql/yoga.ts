// The type of the GraphQL server (graphql-yoga on express) that /graphql and the REST adapter run
// operations through. app.ts makes it; the REST adapter takes it. Here, below both, so that the
// adapter does not import the composition root (test/unit/layers.test.ts).
import type express from 'express';
import type { YogaServerInstance } from 'graphql-yoga';
import type { Context } from './context.ts';

export type Yoga = YogaServerInstance<{ req: express.Request; res?: express.Response }, Context>;
