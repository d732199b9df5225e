import { render } from 'preact'
import { App } from './screens/app.tsx'
import './styles.css'

render(<App />, document.getElementById('root')!)
