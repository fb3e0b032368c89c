# The regwatch image used by deploy/compose.yaml (docs/deployment.md). TypeScript runs through tsx,
# so there is no build step. Not built on the development machine (it has no Docker engine).
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# The workspace's manifest: npm ci resolves the root's workspaces (packages/sdk is not needed to serve).
COPY packages/sdk/package.json ./packages/sdk/
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
# The dictionaries (PKD, legal forms, voivodeships) the service and the daily runs read at run time.
COPY data ./data
ENV HOST=0.0.0.0 NODE_ENV=production
USER node
CMD ["node", "--no-memory-reducer", "--v8-pool-size=0", "bin/regwatch.js", "serve"]
