import {
  type DynamicModule,
  Inject,
  type MiddlewareConsumer,
  Module,
  type NestModule,
} from '@nestjs/common'
import type { UeditorServer } from '@ueditor-backend/server'
import { ueditorExpress } from '@ueditor-backend/server/express'

const UEDITOR = Symbol('UEDITOR')

/**
 * Mounts the editor backend in a NestJS app on the Express platform. Nest registers its body
 * parsers before any module middleware, so create the app with `{ bodyParser: false }` (and
 * add parsers to your own routes), or the materials API's JSON bodies arrive already read
 * (`UE_BODY_CONSUMED`).
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
    const { routes } = this.ue.config
    const at = (path: string) => [path, `${path}/*path`]
    consumer.apply(ueditorExpress(this.ue.editor)).forRoutes(...at(routes.editor))
    consumer.apply(ueditorExpress(this.ue.files)).forRoutes(...at(routes.files))
    consumer.apply(ueditorExpress(this.ue.materials)).forRoutes(...at(routes.materials))
  }
}
