// A NestJS app (Express platform) that adds the editor backend:
// `UEDITOR_AUTH=none node examples/dist/nestjs/app.js`.
// UEDITOR_AUTH=none lets anyone who can reach it upload, for a trial on this machine; without
// it, or an auth setting (docs/auth.md), uploads are refused (UE_AUTH_NOT_CONFIGURED).
import 'reflect-metadata'
import { Body, Controller, Module, Post } from '@nestjs/common'
import { NestFactory } from '@nestjs/core'
import { createUeditorServer } from '@ueditor-backend/server'
import { json } from 'express'
import { UeditorModule } from './ueditor.module.js'

const ue = await createUeditorServer()

@Controller('api')
class EchoController {
  @Post('echo')
  echo(@Body() body: unknown) {
    return body
  }
}

@Module({ imports: [UeditorModule.forRoot(ue)], controllers: [EchoController] })
class AppModule {}

// Nest's own body parsers would read the editor's requests first; parse only the app's routes.
const app = await NestFactory.create(AppModule, { bodyParser: false, logger: ['error', 'warn'] })
app.use('/api', json())
await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1')
console.log(`listening on ${(await app.getUrl()).replace('[::1]', '127.0.0.1')}`)
process.once('SIGTERM', () => {
  void app.close().then(() => ue.close())
})
