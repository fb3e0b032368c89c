import type { AppModule } from '../module.ts';
import { dictionaryRoutes } from './routes.ts';

/** Legal forms, voivodeships and PKD activities. */
export function createDictionariesModule() {
  return {
    name: 'dictionaries',
    routes: async (api) => {
      await api.register(dictionaryRoutes());
    },
  } satisfies AppModule;
}
