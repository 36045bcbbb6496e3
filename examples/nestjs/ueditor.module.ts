import {
  type DynamicModule,
  Inject,
  type MiddlewareConsumer,
  Module,
  type NestModule,
  RequestMethod,
} from '@nestjs/common'
import type { UeditorServer } from '@ueditor-backend/server'
import { ueditorExpress } from '@ueditor-backend/server/express'

const UEDITOR = Symbol('UEDITOR')

/**
 * Mounts the editor backend in a NestJS app on the Express platform: one middleware serves every
 * path the editor is told about (endpoint, files, formula images, materials, loaders) and passes
 * the rest on to Nest. Nest registers its body parsers before any module middleware, so create
 * the app with `{ bodyParser: false }` (and add parsers to your own routes), or the materials
 * API's JSON bodies arrive already read (`UE_BODY_CONSUMED`).
 */
@Module({})
export class UeditorModule implements NestModule {
  static forRoot(ue: UeditorServer): DynamicModule {
    return {
      module: UeditorModule,
      providers: [{ provide: UEDITOR, useValue: ue }],
      exports: [UEDITOR],
    }
  }

  constructor(@Inject(UEDITOR) private readonly ue: UeditorServer) {}

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(ueditorExpress(this.ue)).forRoutes({ path: '*path', method: RequestMethod.ALL })
  }
}
